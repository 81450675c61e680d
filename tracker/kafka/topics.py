"""Topic names, broker URLs and topic creation for the distributed deployment.

Every record on every topic is keyed by the tournament id (UTF-8), and every
producer uses Kafka's default partitioner (murmur2 of the key), so a
tournament's results, state, standings and snapshots each sit on one
partition: one worker owns the tournament, and its records stay in order.

==========================  ========  ===========  ====================================
topic                       cleanup   value        written by
==========================  ========  ===========  ====================================
``tracker-results``         delete    event JSON   replay, follow, gateways (submit)
``tracker-standings``       delete    ``update``   workers, one per accepted event
``tracker-snapshots``       compact   ``snapshot`` workers, once per batch and tournament
``tracker-dead-letters``    delete    dead letter  workers, one per rejected event
``tracker-boards``          delete    board JSON   follow, gateways (games in progress)
``tracker-tournaments-      compact   one event    workers (the Faust table's changelog)
changelog``
``tracker-progress-         compact   offset       workers (the Faust table's changelog)
changelog``
==========================  ========  ===========  ====================================

The last two are the workers' state: per accepted event the event (keyed
``tournament/seq``, see :mod:`tracker.kafka.processing`), and per results
partition the offset of the next record to apply (keyed by the partition
number, not a tournament id).

All topics have the partition count of ``tracker-results``: the Faust table
must be co-partitioned with the topic its agent consumes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Final

from aiokafka.abc import AbstractTokenProvider
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import (
    IllegalSaslStateError,
    KafkaError,
    SaslAuthenticationFailed,
    UnsupportedSaslMechanismError,
)

# The settings are values of tracker.config; the Kafka side names them here too (explicit re-exports).
from tracker.config import BROKER_WAIT as BROKER_WAIT
from tracker.config import OAUTHBEARER
from tracker.config import PLAINTEXT as PLAINTEXT
from tracker.config import SASL_MECHANISMS as SASL_MECHANISMS
from tracker.config import SECURITY_PROTOCOLS as SECURITY_PROTOCOLS
from tracker.config import KafkaSecurity as KafkaSecurity
from tracker.config import SettingsError as SettingsError
from tracker.core.errors import TrackerError

APP_ID: Final = "tracker"
"""The Faust app id: the workers' consumer group and the changelog's prefix."""
TABLE: Final = "tournaments"
PROGRESS_TABLE: Final = "progress"
RESULTS: Final = "tracker-results"
STANDINGS: Final = "tracker-standings"
SNAPSHOTS: Final = "tracker-snapshots"
DEAD_LETTERS: Final = "tracker-dead-letters"
BOARDS: Final = "tracker-boards"
"""Games in progress (``board_updated``), apart from the results: no worker reads them, every gateway does."""
CHANGELOG: Final = f"{APP_ID}-{TABLE}-changelog"
"""The table's changelog, named as Faust names it (``{app id}-{table}-changelog``)."""
PROGRESS_CHANGELOG: Final = f"{APP_ID}-{PROGRESS_TABLE}-changelog"
"""Where the workers keep, per results partition, the offset of the next record to apply."""

DEFAULT_PARTITIONS: Final = 8
COMPACTED: Final = frozenset({SNAPSHOTS, CHANGELOG, PROGRESS_CHANGELOG})
ALL_TOPICS: Final = (RESULTS, STANDINGS, SNAPSHOTS, DEAD_LETTERS, BOARDS, CHANGELOG, PROGRESS_CHANGELOG)


class BrokerError(TrackerError):
    """The Kafka broker cannot be reached or refuses the credentials, or a credentials file cannot be used."""


TOPICS_POLL: Final = 0.5


class TokenFile(AbstractTokenProvider):  # type: ignore[misc]  # aiokafka is not typed
    """The OAUTHBEARER token in a file, read again whenever the file changes.

    An agent beside the process (a Kubernetes projected token, a sidecar,
    a cron job) renews the token by rewriting the file; every Kafka client
    asks for the token each time it logs in (a new connection), and gets
    the file's current first line.  The file is read again when its size,
    modification time or inode changed since the last read, so an unchanged
    file costs one ``stat``.  Raises :class:`BrokerError` when it cannot be
    read or is empty.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._seen: tuple[int, int, int] | None = None
        self._token = ""

    async def token(self) -> str:
        """The bearer token (aiokafka awaits it once per login)."""
        return self.read()

    def read(self) -> str:
        """The file's first line, read again if the file changed."""
        try:
            info = os.stat(self.path)
            seen = (info.st_ino, info.st_size, info.st_mtime_ns)
            if seen != self._seen:
                with open(self.path, encoding="utf-8") as f:
                    token = f.readline().strip()
                if not token:
                    raise BrokerError(f"{self.path}: the OAUTHBEARER token file is empty")
                self._token, self._seen = token, seen
        except OSError as exc:
            raise BrokerError(f"cannot read the OAUTHBEARER token file {self.path}: {exc.strerror}") from None
        return self._token

    def extensions(self) -> dict[str, str]:
        """No SASL extensions (RFC 7628 ``kvpairs``)."""
        return {}


def ssl_context(security: KafkaSecurity) -> ssl.SSLContext | None:
    """A client TLS context: the CA file (or the system's CAs), the client certificate; ``None`` without TLS.

    Raises :class:`BrokerError` when the CA file, the certificate or its key
    cannot be read or do not match.
    """
    if not security.tls:
        return None
    try:
        context = ssl.create_default_context(cafile=security.ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise BrokerError(f"cannot use the CA file {security.ca_file}: {exc}") from None
    if security.cert_file:
        try:
            context.load_cert_chain(security.cert_file, security.key_file)
        except (OSError, ssl.SSLError) as exc:
            raise BrokerError(
                f"cannot use the client certificate {security.cert_file}"
                + (f" with the key {security.key_file}" if security.key_file else "")
                + f": {exc}"
            ) from None
    return context


def token_provider(security: KafkaSecurity) -> TokenFile | None:
    """The OAUTHBEARER token provider of ``security``, ``None`` for other mechanisms.

    Reads the file once now, so a missing or empty token fails at start
    (:class:`BrokerError`) rather than at the first login.
    """
    if security.mechanism != OAUTHBEARER or security.token_file is None:
        return None
    provider = TokenFile(security.token_file)
    provider.read()
    return provider


def security_options(security: KafkaSecurity) -> dict[str, Any]:
    """The keyword arguments aiokafka's producers, consumers and admin clients take for ``security``.

    Raises :class:`BrokerError` when a file it names cannot be used.
    """
    options: dict[str, Any] = {"security_protocol": security.protocol}
    context = ssl_context(security)
    if context is not None:
        options["ssl_context"] = context
    if security.sasl:
        options["sasl_mechanism"] = security.mechanism
        provider = token_provider(security)
        if provider is not None:
            options["sasl_oauth_token_provider"] = provider
        else:
            options["sasl_plain_username"] = security.username
            options["sasl_plain_password"] = security.password
    return options


def bootstrap_servers(broker: str) -> list[str]:
    """``host:port`` addresses from a broker URL.

    Accepts ``kafka://HOST:PORT``, several of them separated by ``;`` or
    ``,`` (Faust's spelling), and bare ``HOST:PORT``.  Raises
    :class:`BrokerError` for anything else.
    """
    servers = []
    for part in broker.replace(",", ";").split(";"):
        part = part.strip()
        if not part:
            continue
        scheme, sep, rest = part.partition("://")
        address = rest if sep else scheme
        if sep and scheme != "kafka":
            raise BrokerError(f"broker URL {part!r}: only kafka:// is supported")
        host, colon, port = address.rstrip("/").rpartition(":")
        if not colon or not host or not port.isdigit():
            raise BrokerError(f"broker URL {part!r}: expected kafka://HOST:PORT")
        servers.append(f"{host}:{port}")
    if not servers:
        raise BrokerError("no broker given: expected kafka://HOST:PORT")
    return servers


def faust_broker(broker: str) -> list[str]:
    """The broker URL list Faust expects (``kafka://HOST:PORT`` each)."""
    return [f"kafka://{server}" for server in bootstrap_servers(broker)]


def topic_config(name: str) -> dict[str, str]:
    """The topic-level configuration tracker creates ``name`` with."""
    return {"cleanup.policy": "compact" if name in COMPACTED else "delete"}


def client_options(broker: str, security: KafkaSecurity) -> dict[str, Any]:
    """``bootstrap_servers`` and the security settings for an aiokafka client of ``broker``.

    Raises :class:`BrokerError` for an invalid URL or a file of ``security`` that cannot be used.
    """
    return {"bootstrap_servers": bootstrap_servers(broker), **security_options(security)}


async def ensure_topics(
    broker: str,
    partitions: int = DEFAULT_PARTITIONS,
    *,
    replication: int = 1,
    security: KafkaSecurity = PLAINTEXT,
    wait: float = BROKER_WAIT,
) -> int:
    """Create whichever of tracker's topics are missing; return the partition count in use.

    The count is that of ``tracker-results`` when it exists already (the
    table must be co-partitioned with it), ``partitions`` otherwise.  Existing
    topics are left as they are, so an operator's topic-creation job (with
    its own replication factor and retention) always wins.  Waits up to
    ``wait`` seconds for the broker to answer; raises :class:`BrokerError`
    when it does not, or refuses to create a topic.
    """
    async with _admin(broker, security, wait) as admin:
        try:
            existing = set(await admin.list_topics())
            if RESULTS in existing:
                described = await admin.describe_topics([RESULTS])
                partitions = len(described[0]["partitions"])
            missing = [
                NewTopic(name, partitions, replication, topic_configs=topic_config(name))
                for name in ALL_TOPICS
                if name not in existing
            ]
            if missing:
                response = await admin.create_topics(missing)
                for topic, code, message in response.topic_errors:
                    if code not in (0, 36):  # 36: created meanwhile by another worker or gateway
                        raise BrokerError(f"cannot create topic {topic}: {message or f'error code {code}'}")
        except KafkaError as exc:
            raise BrokerError(f"Kafka broker {broker}: {exc}") from None
    return partitions


async def await_topics(
    broker: str,
    within: float,
    *,
    partitions: int | None = None,
    security: KafkaSecurity = PLAINTEXT,
    wait: float = BROKER_WAIT,
) -> int:
    """Wait up to ``within`` seconds for tracker's topics to exist, creating none; return their partition count.

    For a cluster whose topics an operator's job creates (Kubernetes): a
    worker or gateway that starts first must not create them itself with
    its own partition count and replication factor.  Every topic must have
    the partition count of ``tracker-results`` (the tables are
    co-partitioned with it) and, when given, ``partitions``.  Raises
    :class:`BrokerError` when the broker does not answer within ``wait``
    seconds, when the topics are still missing after ``within`` seconds, or
    at once when their partition counts are wrong (waiting cannot fix that).
    """
    deadline = time.monotonic() + within
    async with _admin(broker, security, wait) as admin:
        while True:
            try:
                counts = await _partition_counts(admin)
            except KafkaError as exc:
                raise BrokerError(f"Kafka broker {broker}: {exc}") from None
            missing = [name for name in ALL_TOPICS if not counts.get(name)]
            if not missing:
                found = counts[RESULTS]
                unlike = sorted(f"{name} has {counts[name]}" for name in ALL_TOPICS if counts[name] != found)
                if unlike:
                    raise BrokerError(
                        f"the topics are not co-partitioned: {RESULTS} has {found} partitions, {', '.join(unlike)}"
                    )
                if partitions is not None and found != partitions:
                    raise BrokerError(f"{RESULTS} has {found} partitions, not the {partitions} expected")
                return found
            if time.monotonic() >= deadline:
                raise BrokerError(
                    f"after {within:g} s these topics still do not exist at {broker}: {', '.join(missing)};"
                    " create them first (the topic job), or let tracker create them (no --wait-for-topics)"
                )
            await asyncio.sleep(TOPICS_POLL)


async def _partition_counts(admin: Any) -> dict[str, int]:
    existing = set(await admin.list_topics()) & set(ALL_TOPICS)
    if not existing:
        return {}
    described = await admin.describe_topics(sorted(existing))
    return {topic["topic"]: len(topic["partitions"]) for topic in described if not topic.get("error_code")}


@asynccontextmanager
async def started(
    make: Callable[[], Any], broker: str, *, wait: float = BROKER_WAIT, tls: bool = False
) -> AsyncIterator[Any]:
    """The client ``make()`` returns (an aiokafka producer, consumer or admin client), started; stopped on exit.

    The one place tracker starts a Kafka client.  Tries again (a fresh
    client each time) until the broker answers or ``wait`` seconds have
    passed, without aiokafka's line per failed attempt; then raises
    :class:`BrokerError` with one sentence saying why.  A refused TLS
    certificate or SASL login is not retried: waiting cannot fix it.
    ``tls`` says whether the client speaks TLS (a plaintext listener never
    answers its handshake), for the sentence.
    """
    client = await _start(make, broker, wait, tls)
    try:
        yield client
    finally:
        await _stop(client)


@asynccontextmanager
async def admin_client(broker: str, security: KafkaSecurity, wait: float) -> AsyncIterator[Any]:
    """A started admin client of ``broker`` (raises :class:`BrokerError` as :func:`started` does)."""
    async with _admin(broker, security, wait) as admin:
        yield admin


@asynccontextmanager
async def _admin(broker: str, security: KafkaSecurity, wait: float) -> AsyncIterator[Any]:
    options = client_options(broker, security)
    make = lambda: AIOKafkaAdminClient(request_timeout_ms=10_000, **options)  # noqa: E731
    async with started(make, broker, wait=wait, tls=security.tls) as admin:
        yield admin


_FATAL: Final = (ssl.SSLError, SaslAuthenticationFailed, UnsupportedSaslMechanismError, IllegalSaslStateError)
"""Failures to connect that trying again cannot fix: a certificate not trusted, credentials refused."""


async def _start(make: Callable[[], Any], broker: str, wait: float, tls: bool) -> Any:
    deadline = time.monotonic() + wait
    with _connect_failures() as failures:
        while True:
            client = make()
            try:
                async with asyncio.timeout(max(0.1, deadline - time.monotonic())):
                    await client.start()
            except (KafkaError, OSError, TimeoutError) as exc:
                await _stop(client)
                reason = failures[-1] if failures else exc
                if isinstance(reason, _FATAL):
                    raise BrokerError(
                        f"cannot connect to the Kafka broker at {broker}: {_describe(reason, tls)}"
                    ) from None
                if time.monotonic() >= deadline:
                    raise BrokerError(
                        f"cannot connect to the Kafka broker at {broker} within {wait:g} s: {_describe(reason, tls)}"
                    ) from None
                await asyncio.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
            else:
                return client


async def _stop(client: Any) -> None:
    stop = getattr(client, "stop", None) or client.close  # admin clients close, producers and consumers stop
    await stop()


def _describe(reason: BaseException, tls: bool) -> str:
    if isinstance(reason, TimeoutError):
        if tls:
            return "no answer to the TLS handshake: is its listener TLS (else use PLAINTEXT or SASL_PLAINTEXT)?"
        return "no answer in time"
    if isinstance(reason, ssl.SSLCertVerificationError):
        return f"its TLS certificate is not trusted ({reason.verify_message}); give the CA file that signed it"
    if isinstance(reason, ssl.SSLError):
        return f"TLS failed ({reason.reason or reason}); is the listener TLS, and the protocol SSL or SASL_SSL?"
    if isinstance(reason, UnsupportedSaslMechanismError):
        offered = str(reason).partition("Enabled mechanisms are: ")[2]
        return "SASL authentication failed: the broker does not offer this SASL mechanism" + (
            f" (it offers {offered})" if offered else ""
        )
    if isinstance(reason, SaslAuthenticationFailed | IllegalSaslStateError):
        return f"SASL authentication failed: {reason}"
    text = str(reason) or type(reason).__name__
    if isinstance(reason, ConnectionRefusedError):
        return f"nothing accepts connections there ({text})"
    if isinstance(reason, ConnectionResetError | EOFError) or "closed" in text or "eof" in text.lower():
        return f"the broker closed the connection ({text}); does the security protocol match its listener's?"
    return text


@contextmanager
def _connect_failures() -> Iterator[list[BaseException]]:
    """The errors aiokafka logs per failed connection attempt, collected instead of logged."""
    failures: list[BaseException] = []

    def collect(record: logging.LogRecord) -> bool:
        error = record.args[-1] if isinstance(record.args, tuple) and record.args else None
        if isinstance(error, BaseException) and str(record.msg).startswith("Unable "):
            failures.append(error)
            return False
        return True

    logger = logging.getLogger("aiokafka")  # aiokafka.client logs as "aiokafka"
    logger.addFilter(collect)
    try:
        yield failures
    finally:
        logger.removeFilter(collect)
