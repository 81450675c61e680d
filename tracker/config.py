"""Configuration: one frozen value, built by the CLI and passed down.

The CLI is the only place that reads the environment (``TRACKER_TOKEN``);
everything below receives a :class:`ServerConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Limits:
    """Safe defaults for what one client may do; going over gets a clear close or rejection."""

    max_frame: int = 64 * 1024  # bytes per websocket message (close 1009 beyond)
    max_subscriptions: int = 32  # tournaments per connection
    max_connections: int = 20_000  # in total (HTTP 503 beyond)
    submits_per_second: float = 200.0  # per token, sustained
    submit_burst: int = 400  # per token, burst
    max_buffer: int = 1 << 20  # unsent bytes per subscriber before it is dropped (close 1008)
    max_pending_submits: int = 64  # unanswered submits per connection before the server stops reading it
    history: int = 2000  # updates kept per tournament for resume
    history_bytes: int = 256 << 10  # and at most this many bytes of their deltas per tournament (beyond: a snapshot)
    max_resume: int = 1 << 20  # bytes of missed updates a resume may replay; beyond, the client gets a snapshot
    subscribes_per_second: float = 10.0  # per connection, sustained (a re-subscribe loop is throttled)
    subscribe_burst: int = 40  # per connection, burst
    projection_seconds: float = 10.0  # an arbiter projection running longer is stopped (and not sent)
    projection_memory: int = 1 << 30  # address space of a projection worker process (RLIMIT_AS), 0 for none
    projection_workers: int = 2  # projections running at once, each tournament's one at a time


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
