"""The arbiter token check: constant time, throttled and logged per client address.

How this works
--------------

Every message that carries a token (a ``submit``, a ``subscribe`` as
arbiter) is checked by :meth:`TokenGuard.check` with the address the
connection comes from.  Each address has a token bucket of
``per_second`` wrong guesses (100 a second, a burst of 100): a wrong token
spends one, a right one costs nothing (an arbiter's own submits are limited
per token by the gateway, 200 a second).  While an address's bucket is
empty, every check from it, right or wrong, is refused as ``rate-limited``
*without comparing*: guessing from one address gets at most about 100
comparisons a second, however fast it sends.  A connection that has already
shown the right token is exempt: it has nothing left to guess, and an
arbiter at work is not stopped by a guesser behind the same address.

Addresses are counted as networks can hand them out: an IPv6 client is its
/64 (one household, one machine: it can use any of the /64's addresses), an
IPv4 client its address.  And the addresses that guessed wrong spend a
global bucket together (``global_per_second``, 300 a second): many source
addresses guessing at once (a botnet, or 50 loopback addresses) still get at
most that many comparisons a second between them, plus one for each address
not seen guessing before.  An address with no wrong token in the last
``idle`` seconds is not held by the global bucket (its wrong token still
spends it), so an arbiter's fresh connection from its own address — a page
reload, a second device, ``tracker follow`` reconnecting — is compared at
once, however many others guess; only a guesser behind the arbiter's own
address (the same NAT, the same /64) can make it wait, a second at most.

Memory is bounded: an address is forgotten once its bucket has been full
for ``idle`` seconds (it would start full anyway), and at most
``max_addresses`` are tracked (past that, the least recently seen is
forgotten first).

Wrong tokens are logged at WARNING, aggregated per address: the first one
at once, then at most one line per ``log_every`` seconds with the count of
wrong and refused checks since the last line.  The token itself never
appears in a line.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Final

from websockets.http11 import Request

from tracker.config import Limits
from tracker.core.phrases import Said, phrase, render
from tracker.gateway.metrics import Metrics

logger = logging.getLogger("tracker.gateway.auth")
COMPARED = "tracker_token_checks_total"  # tokens compared with the arbiter token
REFUSED = "tracker_token_checks_refused_total"  # checks refused as rate-limited, not compared


class Verdict(Enum):
    """What a token check decided."""

    OK = "ok"
    WRONG = "unauthorized"  # the values are the wire codes of ``error`` and ``rejected``
    RATE_LIMITED = "rate-limited"

    @property
    def reason(self) -> str:
        """The human sentence sent with the code (in English)."""
        return render(self.said, str) if self is not Verdict.OK else ""

    @property
    def said(self) -> Said:
        """The sentence as a phrase, for a client to write in its viewer's language (not for :attr:`OK`)."""
        return _REASONS[self]()


_REASONS: Final = {
    Verdict.WRONG: phrase("rejected.token", "a valid arbiter token is required"),
    Verdict.RATE_LIMITED: phrase(
        "rejected.token_rate", "too many wrong arbiter tokens from this address: wait a second before trying again"
    ),
}


@dataclass(slots=True)
class Bucket:
    """A token bucket: ``rate`` tokens a second up to ``burst``; the gateway's every throttle is one."""

    tokens: float
    stamp: float

    def refill(self, now: float, rate: float, burst: int) -> None:
        self.tokens = min(float(burst), self.tokens + (now - self.stamp) * rate)
        self.stamp = now

    def take(self, rate: float, burst: int, now: float | None = None) -> bool:
        """Refill, then spend one token if there is one; ``False`` when the bucket is empty."""
        self.refill(time.monotonic() if now is None else now, rate, burst)
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


@dataclass(slots=True)
class _Address(Bucket):
    wrong: int = 0  # wrong tokens since the last log line
    refused: int = 0  # checks refused unread since the last log line
    logged: float = float("-inf")
    wrong_at: float = float("-inf")  # when it last sent a wrong token


class TokenGuard:
    """Checks arbiter tokens for a gateway; see the module docstring."""

    def __init__(
        self,
        token: str,
        *,
        per_second: float = 100.0,
        burst: int = 100,
        idle: float = 60.0,
        max_addresses: int = 10_000,
        log_every: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        metrics: Metrics | None = None,
        global_per_second: float = 300.0,
        global_burst: int = 300,
    ) -> None:
        self.token = token.encode()
        self.per_second = per_second
        self.burst = burst
        self.global_per_second = global_per_second
        self.global_burst = global_burst
        self._everyone = Bucket(float(global_burst), clock())
        self.idle = idle
        self.max_addresses = max_addresses
        self.log_every = log_every
        self.clock = clock
        self.metrics = metrics if metrics is not None else Metrics()
        for name in (COMPARED, REFUSED):
            self.metrics.inc(name, 0)  # on /metrics from the start
        self._addresses: OrderedDict[str, _Address] = OrderedDict()

    @classmethod
    def of_limits(
        cls, token: str, limits: Limits, *, metrics: Metrics | None = None, clock: Callable[[], float] = time.monotonic
    ) -> TokenGuard:
        """The guard with ``limits``' wrong-token budgets (per address and over all addresses)."""
        return cls(
            token,
            per_second=limits.wrong_tokens_per_second,
            burst=limits.wrong_token_burst,
            global_per_second=limits.wrong_tokens_total_per_second,
            global_burst=limits.wrong_token_total_burst,
            metrics=metrics,
            clock=clock,
        )

    def check(self, token: str, address: str, *, proven: bool = False) -> Verdict:
        """Whether ``token`` (sent from ``address``) is the arbiter token.

        Returns :attr:`Verdict.RATE_LIMITED` without comparing while
        ``address`` has spent its wrong guesses, unless the check comes on a
        connection that has already ``proven`` it holds the token (it has
        nothing to guess, and a guesser sharing its address must not stop an
        arbiter at work).  A server without a token accepts nobody
        (:attr:`Verdict.WRONG`).
        """
        now = self.clock()
        entry = self._entry(address, now)
        if not proven:
            self._everyone.refill(now, self.global_per_second, self.global_burst)
            guessed = now - entry.wrong_at < self.idle  # only addresses that guessed wrong share the global cap
            if entry.tokens < 1 or (guessed and self._everyone.tokens < 1):
                self.metrics.inc(REFUSED)
                entry.refused += 1
                self._log(address, entry, now)
                return Verdict.RATE_LIMITED
        self.metrics.inc(COMPARED)
        if self.token and hmac.compare_digest(token.encode(), self.token):
            return Verdict.OK
        if not proven:
            entry.tokens -= 1
            self._everyone.tokens -= 1  # below zero after a newcomer's guess: the others wait the longer
        entry.wrong += 1
        entry.wrong_at = now
        self._log(address, entry, now)
        return Verdict.WRONG

    def tracked(self) -> int:
        """How many addresses the guard remembers now."""
        return len(self._addresses)

    def _entry(self, address: str, now: float) -> _Address:
        self._forget(now)
        entry = self._addresses.get(address)
        if entry is None:
            entry = self._addresses[address] = _Address(float(self.burst), now)
            while len(self._addresses) > self.max_addresses:
                self._drop(next(iter(self._addresses)))
        else:
            self._addresses.move_to_end(address)
            entry.refill(now, self.per_second, self.burst)
        entry.stamp = now
        return entry

    def _forget(self, now: float) -> None:
        """Forget addresses not seen for ``idle`` seconds (the least recently seen are first)."""
        while self._addresses:
            address, entry = next(iter(self._addresses.items()))
            if now - entry.stamp < self.idle:
                return
            self._drop(address)

    def _drop(self, address: str) -> None:
        entry = self._addresses.pop(address)
        if entry.wrong or entry.refused:  # what was not logged yet is logged as the address is forgotten
            self._line(address, entry)

    def _log(self, address: str, entry: _Address, now: float) -> None:
        if now - entry.logged >= self.log_every:
            entry.logged = now
            self._line(address, entry)

    @staticmethod
    def _line(address: str, entry: _Address) -> None:
        logger.warning(
            "wrong arbiter token from %s: %d wrong, %d refused unchecked (rate-limited) since the last report",
            address,
            entry.wrong,
            entry.refused,
        )
        entry.wrong = entry.refused = 0


def address_of(remote: object) -> str:
    """The client as the throttles count it, from a connection's ``remote_address`` (``"?"`` when unknown).

    An IPv4 address as it is (an IPv4-mapped IPv6 one too); an IPv6 address as its /64, e.g.
    ``2001:db8:1:2::/64``: a client can pick any address of its /64.
    """
    if not (isinstance(remote, tuple) and remote):
        return "?"
    try:
        ip = ipaddress.ip_address(str(remote[0]).split("%", 1)[0])
    except ValueError:
        return str(remote[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def handshake_origin_allowed(request: Request, allowed: tuple[str, ...] | None) -> bool:
    """:func:`origin_allowed` for a handshake request; two ``Origin`` or two ``Host`` headers are refused."""
    origins, hosts = request.headers.get_all("Origin"), request.headers.get_all("Host")
    if len(origins) > 1 or len(hosts) > 1:
        return False
    return origin_allowed(origins[0] if origins else None, hosts[0] if hosts else None, allowed)


_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def origin_allowed(origin: str | None, host: str | None, allowed: tuple[str, ...] | None) -> bool:
    """Whether a websocket handshake with these ``Origin`` and ``Host`` headers may go on.

    No ``Origin`` (scripts, ``tracker replay``): yes, it is a browser's
    header.  A browser's: yes when its page came from this server (the
    origin's host and port are the ``Host`` header's, default ports filled
    in from the origin's scheme) or when it is listed in ``allowed``
    (``--allow-origin``, compared exactly); any other page, ``null``
    included, is refused, so a page an arbiter happens to have open cannot
    talk to a tracker on 127.0.0.1.
    """
    if origin is None:
        return True
    if allowed and origin in allowed:
        return True
    scheme, sep, rest = origin.partition("://")
    if not sep or host is None or scheme.lower() not in _DEFAULT_PORTS or "/" in rest:
        return False
    default = _DEFAULT_PORTS[scheme.lower()]
    return _host_port(rest, default) == _host_port(host, default)


def _host_port(netloc: str, default: int) -> tuple[str, int] | None:
    """``("example.org", 8000)`` for ``example.org:8000`` or ``[::1]:8000``; ``None`` when malformed."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        name, bracket, tail = netloc.partition("]")
        if not bracket:
            return None
        name += "]"
    else:
        name, colon, port = netloc.partition(":")
        tail = colon + port
    if not tail:
        return (name, default) if name else None
    if not tail.startswith(":") or not (tail[1:].isascii() and tail[1:].isdigit()):
        return None
    return (name, int(tail[1:])) if name else None
