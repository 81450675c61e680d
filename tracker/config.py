"""Configuration: one frozen value per command, built by the CLI and passed down.

The CLI is the only place that reads the environment (``TRACKER_TOKEN``);
everything below receives a :class:`ServerConfig` (``tracker up``,
``tracker gateway``), a :class:`WorkerSettings` (``tracker worker``) and,
on Kafka, a :class:`KafkaSecurity`.  These are values only: this module sits
at the bottom of the shell's layers and imports nothing of it (the core may
not import it either: import-linter says so).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from tracker.core.errors import TrackerError


@dataclass(frozen=True, slots=True)
class Limits:
    """Safe defaults for what one client may do; going over gets a clear close or rejection."""

    max_frame: int = 64 * 1024  # bytes per websocket message (close 1009 beyond)
    max_subscriptions: int = 32  # tournaments per connection
    max_connections: int = 20_000  # in total (HTTP 503 beyond)
    # per client address (an IPv6 /64 counts as one); beyond, closed at once with 1008 and a reason. A venue's
    # audience behind one NAT address is many connections: this is a bound on one client, not on a crowd
    max_connections_per_address: int = 2000
    stakes_joins_per_second: float = 2.0  # subscribes asking for stakes or boards, per client address, sustained
    stakes_join_burst: int = 20
    submits_per_second: float = 200.0  # per token, sustained
    submit_burst: int = 400  # per token, burst
    # wrong arbiter tokens compared, per client address and over all addresses (a right token spends nothing);
    # beyond, refused ``rate-limited`` without comparing (tracker.gateway.auth)
    wrong_tokens_per_second: float = 100.0
    wrong_token_burst: int = 100
    wrong_tokens_total_per_second: float = 300.0
    wrong_token_total_burst: int = 300
    max_buffer: int = 1 << 20  # unsent bytes per subscriber before it is dropped (close 1008)
    max_pending_submits: int = 64  # unanswered submits per connection before the server stops reading it
    history: int = 2000  # updates kept per tournament for resume
    history_bytes: int = 256 << 10  # and at most this many bytes of their deltas per tournament (beyond: a snapshot)
    max_resume: int = 1 << 20  # bytes of missed updates a resume may replay; beyond, the client gets a snapshot
    subscribes_per_second: float = 10.0  # per connection, sustained (a re-subscribe loop is throttled)
    subscribe_burst: int = 40  # per connection, burst
    projection_seconds: float = 10.0  # an arbiter projection running longer is stopped (and not sent)
    projection_memory: int = 1 << 30  # address space of a projection worker process (RLIMIT_AS), 0 for none
    # the exact search's own time within projection_seconds (None: what the reserve for the bounds leaves); 0: no
    # search, the bounds at once (cut short: what a test of the cut, or a server too slow to search, wants)
    projection_search_seconds: float | None = None
    # worker processes for derived work (projections, stakes, live chances), one kept for arbiters' projections
    projection_workers: int = 3


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything ``tracker up`` and ``tracker gateway`` need to serve."""

    host: str = "127.0.0.1"
    port: int = 8080
    token: str = ""
    data_dir: Path = Path("data")
    durable: bool = True
    allowed_origins: tuple[str, ...] | None = None
    limits: Limits = field(default_factory=Limits)
    projection_delay: float = 0.3  # seconds to wait for more results before projecting
    live_interval: float = 1.0  # live boards: at most one boards message and one live job per this many seconds
    stale_after: float = 120.0  # a board not refreshed for this many seconds is marked stale (--stale-after)


class SettingsError(TrackerError):
    """Settings that cannot be meant together (a password without SASL, a client key without TLS)."""


SECURITY_PROTOCOLS: Final = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
"""Kafka's ``security.protocol`` values: TLS or not, SASL or not."""
OAUTHBEARER: Final = "OAUTHBEARER"
SASL_MECHANISMS: Final = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", OAUTHBEARER)
BROKER_WAIT: Final = 5.0
"""Seconds a command waits for the broker to answer before it gives up with one sentence."""


@dataclass(frozen=True, slots=True)
class KafkaSecurity:
    """How every Kafka client of one command reaches the broker: TLS, SASL, both or neither.

    ``protocol`` is Kafka's ``security.protocol``.  The TLS ones (``SSL``,
    ``SASL_SSL``) verify the broker's certificate against ``ca_file`` (PEM),
    or against the system's CAs without one, and present ``cert_file`` (with
    ``key_file``, unless the key is in the same PEM) as the client's own
    certificate when the listener asks for one (mTLS).  The ``SASL_*`` ones
    need a ``mechanism``: ``PLAIN`` and ``SCRAM-*`` with a ``username`` and
    a ``password``, ``OAUTHBEARER`` with a ``token_file`` that holds the
    bearer token (read again whenever it changes, so an agent that renews
    it keeps the clients logged in).  Raises :class:`SettingsError` for a
    combination that cannot be meant (a password without SASL, a CA or
    client certificate without TLS), so a forgotten ``protocol`` fails at
    start instead of sending credentials nowhere.  The password is kept out
    of ``repr``.  Reading the files is the Kafka clients' business
    (:func:`tracker.kafka.topics.security_options`).
    """

    protocol: str = "PLAINTEXT"
    mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    token_file: str | None = None

    def __post_init__(self) -> None:
        if self.protocol not in SECURITY_PROTOCOLS:
            raise SettingsError(
                f"unknown Kafka security protocol {self.protocol!r}: use {', '.join(SECURITY_PROTOCOLS)}"
            )
        if self.sasl:
            if self.mechanism not in SASL_MECHANISMS:
                raise SettingsError(
                    f"{self.protocol} needs a SASL mechanism ({', '.join(SASL_MECHANISMS)}), not {self.mechanism!r}"
                )
            if self.mechanism == OAUTHBEARER:
                if not self.token_file:
                    raise SettingsError(f"{OAUTHBEARER} needs a token file (--kafka-token-file)")
                if self.username or self.password:
                    raise SettingsError(f"{OAUTHBEARER} takes a token file, not a user name or a password")
            elif not self.username or not self.password:
                raise SettingsError(f"{self.protocol} needs a SASL user name and a password")
            elif self.token_file:
                raise SettingsError(f"a token file is for the {OAUTHBEARER} mechanism, not {self.mechanism}")
        elif self.mechanism or self.username or self.password or self.token_file:
            raise SettingsError(
                f"a SASL mechanism, user, password or token is set but the security protocol is {self.protocol}:"
                " use SASL_SSL (or SASL_PLAINTEXT)"
            )
        if (self.ca_file or self.cert_file or self.key_file) and not self.tls:
            what = "a CA file" if self.ca_file else "a client certificate"
            raise SettingsError(f"{what} is set but the security protocol is {self.protocol}: use SSL or SASL_SSL")
        if self.key_file and not self.cert_file:
            raise SettingsError("a client key needs its certificate (--kafka-cert-file)")

    @property
    def tls(self) -> bool:
        """Whether the connections are TLS (``SSL`` or ``SASL_SSL``)."""
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        """Whether the clients authenticate with SASL."""
        return self.protocol.startswith("SASL_")


PLAINTEXT: Final = KafkaSecurity()
"""No TLS, no SASL: a broker on a trusted network (compose, the tests)."""


STALL_AFTER: Final = 60.0
"""Seconds a worker's results partition with records to apply may stay unmoved before ``/healthz`` fails."""


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """Everything a worker (``tracker worker``) needs.

    ``None`` timeouts (seconds) leave Faust's defaults, which Faust also
    reads from ``BROKER_REBALANCE_TIMEOUT``, ``BROKER_SESSION_TIMEOUT``,
    ``BROKER_HEARTBEAT_INTERVAL`` and ``BROKER_COMMIT_INTERVAL``.  A Faust
    worker waits out the rebalance timeout before it joins its group, and a
    dead worker's partitions move after the session timeout.
    ``partitions`` is used only when the topics do not exist yet; with
    ``wait_for_topics`` (seconds) the worker creates no topic but waits for
    an operator's job to create them, and ``partitions``, when given, is the
    count they must have.  ``security`` and ``broker_wait`` are how every
    client reaches the broker and how long the worker waits for it to answer.
    ``health_port`` (``None``: none) serves ``/healthz``, ``/readyz`` and
    ``/metrics`` on ``health_host``; a results partition that has records
    to apply and has not moved for ``stall_after`` seconds fails ``/healthz``.
    """

    broker: str
    partitions: int | None = None
    data_dir: Path | None = None
    replication: int = 1
    rebalance_timeout: float | None = None
    session_timeout: float | None = None
    heartbeat_interval: float | None = None
    commit_interval: float | None = None
    loglevel: str = "WARNING"
    security: KafkaSecurity = PLAINTEXT
    broker_wait: float = BROKER_WAIT
    wait_for_topics: float | None = None
    health_host: str = "127.0.0.1"
    health_port: int | None = None
    stall_after: float = STALL_AFTER
