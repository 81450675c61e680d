"""The follower: poll a source, diff it against the ledger, submit; and the ``tracker follow`` command."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections import Counter
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from tracker.client import Acked, Rejected, Reply, TrackerUnavailable
from tracker.core.audit import audit
from tracker.core.errors import FormatError
from tracker.core.events import (
    ByeRecorded,
    ByeVoided,
    Event,
    ResultCorrected,
    ResultRecorded,
    ResultVoided,
)
from tracker.follow.boards import BoardFeed
from tracker.follow.engine import Engine
from tracker.follow.errors import BrokenRead, FollowError
from tracker.follow.ledger import Ledger, View, describe, view_of
from tracker.follow.names import StartList
from tracker.follow.sources import HTTP_TIMEOUT, Source, _is_pgn, source_for
from tracker.follow.trackers import KafkaTracker, Tracker, WebsocketTracker
from tracker.follow.whole import why_broken
from tracker.formats import TournamentFile, read_tournament_text
from tracker.formats.progress import Progress, games_in_progress

if TYPE_CHECKING:
    from tracker.kafka.topics import KafkaSecurity

log = logging.getLogger("tracker.follow")

MAX_BACKOFF: Final = 60.0  # seconds between retries at most (or the interval, when longer)
CONFIRM_READS: Final = 3  # consecutive whole reads that must say a result is gone or changed …
CONFIRM_SECONDS: Final = 5.0  # … spanning at least this long, before follow acts on it


@dataclass(frozen=True, slots=True)
class Confirm:
    """When the source taking back or changing a result is believed.

    A void or a correction (a game gone from the source, a result changed,
    a bye gone or changed) is acted on only once ``reads`` consecutive whole
    reads of the source said the same, the first and the last at least
    ``seconds`` apart: a publisher's half-written upload, a file caught
    mid-write or a broadcast tool's reshuffle lasts less than that.  A
    confirmed correction is submitted; a confirmed void is a notice on the
    arbiters' desk (the arbiter decides) unless ``trust_voids``, then it is
    submitted.  New results are never held back: recording what the source
    shows cannot be undone by a hiccup, only delayed.
    """

    reads: int = CONFIRM_READS
    seconds: float = CONFIRM_SECONDS
    trust_voids: bool = False


#: Act on every read at once (the behaviour before confirmation; for tests of the diff itself).
AT_ONCE: Final = Confirm(reads=1, seconds=0.0, trust_voids=True)


@dataclass(frozen=True, slots=True)
class PollResult:
    """What one poll did.

    ``changed``: whether the source had a new version; ``acked``: events the
    tracker acknowledged (the tournament's opening included); ``rejected``:
    events refused, with code and reason; ``unmatched``: names found in no
    start list (each reported once per follower); ``held``: events not
    submitted because they would override an entry this follower did not
    make (an arbiter's), without ``override``.
    """

    changed: bool = False
    acked: tuple[Event, ...] = ()
    rejected: tuple[tuple[Event, str, str], ...] = ()
    unmatched: tuple[str, ...] = ()
    held: tuple[Event, ...] = ()
    boards: int = 0  # boards of games in progress sent


class Follower:
    """Follows one source into one tournament.  :meth:`poll` once, or :meth:`run` until stopped."""

    def __init__(
        self,
        source: Source,
        tournament: str,
        tracker: Tracker,
        *,
        override: bool = False,
        boards: BoardFeed | None = None,
        confirm: Confirm = Confirm(),
    ) -> None:
        self.source = source
        self.confirm = confirm
        self.doubts: dict[str, tuple[float, int]] = {}  # a void or correction not yet confirmed → (first read, reads)
        self.noticed: set[str] = set()  # confirmed voids put on the desk, not submitted
        self.broken: str | None = None  # why the last read of the source was not whole
        self.feed = boards
        self.progress: list[Progress] = []  # the source's games in progress, as last read
        self.override = override
        self.tournament = tournament
        self.tracker = tracker
        self.latest: TournamentFile | None = None
        self.latest_is_pgn = False
        self.settled = True  # every change of ``latest`` has been submitted
        self.previous: View | None = None
        self.ledger: Ledger | None = None
        self.start: StartList | None = None
        self.stale = False  # re-read the tracker's state before the next diff
        self.refused: set[str] = set()
        self.reported: set[str] = set()
        self.audited: tuple[str, ...] | None = None  # the last official-standings verdict logged

    async def poll(self) -> PollResult:
        """Read the source once and submit what changed.

        Returns what was done.  Raises :class:`SourceError` (source
        unreadable), :class:`~tracker.core.errors.FormatError` (a version of
        the source that cannot be read as a round robin; nothing of it is
        submitted), :class:`TrackerUnavailable` (what was not acknowledged
        is submitted again, with the same ids, at the next poll) and
        :class:`FollowError` (the tracker refused to open the tournament).
        """
        text = await self.source.read()
        now = asyncio.get_running_loop().time()
        if text is not None:
            self._take(text)
        elif self.broken is not None:  # unchanged since a broken read (a 304 for the same error page): still broken
            raise BrokenRead(f"{self.source.name}: {self.broken}")
        if self.latest is None or (self.settled and not self.doubts):
            return PollResult(changed=text is not None, boards=await self._boards())
        tf = self.latest
        opened_now: list[Event] = []
        if self.ledger is None or self.stale:
            opened_now = await self._read_tracker(tf)
        assert self.ledger is not None and self.start is not None
        view, unmatched = view_of(tf, self.start, knows_short=not self.latest_is_pgn)
        for name in unmatched:
            if name not in self.reported:
                self.reported.add(name)
                log.error(
                    "follow: %s: %s; the games of that player are not submitted",
                    self.source.name,
                    self.start.why_not(name),
                )
        if self.previous is None:
            self.ledger.agree(view)
        events = [e for e in self.ledger.changes(self.previous, view) if e.id not in self.refused]
        events = await self._confirmed(events, now)
        held: list[Event] = []
        if not self.override:
            events, held = self.ledger.hold(events)
            self._conflicts(held)
        try:
            replies = await self.tracker.submit(events) if events else []
        except TrackerUnavailable as exc:
            self._note(events, exc.replies)
            raise
        acked, rejected = self._note(events, replies)
        self.previous = self._kept(view)
        # held back: look again at the next poll (the arbiter may clear the way), reading the tracker afresh
        self.settled = not held and not self.doubts
        if held:
            self.stale = self.tracker.can_read
        sent = await self._boards()
        return PollResult(True, tuple(opened_now) + acked, rejected, unmatched, tuple(held), sent)

    async def aclose(self) -> None:
        """Close the source's connections, the engine and the tracker's connection; idempotent."""
        if self.feed is not None and self.feed.engine is not None:
            await self.feed.engine.aclose()
        await self.source.aclose()
        await self.tracker.aclose()

    def _take(self, text: str) -> None:
        """A new version of the source: parse it, or note once why it is not whole and keep the last whole one.

        Raises :class:`BrokenRead` for a read that is cut, an error page or
        unreadable as a round robin: nothing of it is used, the previous
        read stands and the next poll reads the source again.
        """
        pgn = _is_pgn(text, self.source.name)
        why = why_broken(text, pgn=pgn)
        tf: TournamentFile | None = None
        if why is None:
            try:
                tf = read_tournament_text(text, self.source.name, self.tournament)
            except FormatError as exc:
                why = str(exc)
        if tf is None:
            assert why is not None
            if why != self.broken:
                log.warning(
                    "follow: %s: read held back, nothing of it is used: %s; the last whole read stands",
                    self.source.name,
                    why,
                )
            self.broken = why
            raise BrokenRead(f"{self.source.name}: {why}")
        if self.broken is not None:
            log.info("follow: %s reads whole again", self.source.name)
            self.broken = None
        self.latest = tf
        self.latest_is_pgn = pgn
        self.progress = games_in_progress(text) if pgn and self.feed is not None else []
        self.settled = False
        self._audit(tf)

    async def _confirmed(self, events: list[Event], now: float) -> list[Event]:
        """The events to submit now: new results at once, voids and corrections once confirmed (:class:`Confirm`).

        A doubtful event is logged once when first seen; a confirmed void
        without ``trust_voids`` goes to the desk as a notice, once, and is
        not submitted.  Recordings that need the slot of a doubtful void
        wait with it.  A doubt the source stops repeating is forgotten.
        """
        assert self.start is not None
        confirm = self.confirm
        out: list[Event] = []
        seen: set[str] = set()
        blocked: set[tuple[int, int]] = set()
        for event in events:
            if isinstance(event, ResultRecorded | ByeRecorded):
                slots = (
                    {(event.round, event.white), (event.round, event.black)}
                    if isinstance(event, ResultRecorded)
                    else {(event.round, event.player)}
                )
                if not slots & blocked:
                    out.append(event)
                continue
            what = describe(event, self.start)
            seen.add(what)
            void = isinstance(event, ResultVoided | ByeVoided)
            if what in self.noticed:
                blocked.update(_slots(event))
                continue
            first, reads = self.doubts.get(what, (now, 0))
            reads += 1
            if reads >= confirm.reads and now - first >= confirm.seconds:
                self.doubts.pop(what, None)
                if void and not confirm.trust_voids:
                    self.noticed.add(what)
                    blocked.update(_slots(event))
                    await self._propose(event, what, reads, now - first)
                else:
                    out.append(event)
                continue
            if what not in self.doubts:
                then = "voided" if void and confirm.trust_voids else "corrected" if not void else "put to the arbiter"
                log.warning(
                    "follow: %s: %s held back: a whole read of the source says so, not yet %d over %g s; "
                    "%s if it keeps saying so",
                    self.source.name,
                    what,
                    confirm.reads,
                    confirm.seconds,
                    then,
                )
            self.doubts[what] = (first, reads)
            if void:
                blocked.update(_slots(event))
        for what in [w for w in self.doubts if w not in seen]:
            del self.doubts[what]
            log.info("follow: %s: no longer says %s; nothing done", self.source.name, what)
        self.noticed &= seen
        return out

    async def _propose(self, event: Event, what: str, reads: int, seconds: float) -> None:
        """Put a void the source confirmed on the arbiters' desk instead of applying it."""
        reason = (
            f"follow: the source {self.source.name} no longer has this ({reads} reads over {seconds:.1f} s): "
            "void it if the source is right (or run follow with --trust-voids)"
        )
        delivered = await self.tracker.propose(event, reason)
        log.warning(
            "follow: %s: %s at the source, confirmed by %d reads over %.1f s: not voided, %s "
            "(run follow with --trust-voids to void what the source voids)",
            self.source.name,
            what,
            reads,
            seconds,
            "a notice is on the arbiters' desk" if delivered else "the arbiter must decide",
        )

    def _kept(self, view: View) -> View:
        """``view`` as the previous read for the next diff, with what the tracker still has that left the source.

        A game (or bye) gone from the source but not voided (a doubt, or a
        notice) stays in the previous read so that the next read still sees
        it gone.
        """
        if self.previous is None or self.ledger is None:
            return view
        games = dict(view.games)
        byes = dict(view.byes)
        for key, outcome in self.previous.games.items():
            if key not in games and key in self.ledger.games:
                games[key] = outcome
        for bye, kind in self.previous.byes.items():
            if bye not in byes and bye in self.ledger.byes:
                byes[bye] = kind
        return View(games, byes, view.knows_short)

    async def _boards(self) -> int:
        """Send the boards of the games in progress that changed (after the results: a result ends a board)."""
        if self.feed is None or self.start is None or not self.progress:
            return 0
        boards = self.feed.boards(self.progress, self.start, asyncio.get_running_loop().time())
        if not boards:
            return 0
        replies = await self.tracker.submit_boards(boards)
        for board, reply in zip(boards, replies, strict=False):
            if isinstance(reply, Rejected) and reply.code != "game-finished":  # a result overtook it: expected
                log.warning(
                    "follow: the board of round %d %d–%d refused (%s): %s",
                    board.round,
                    board.white,
                    board.black,
                    reply.code,
                    reply.reason,
                )
        return len(boards)

    def _conflicts(self, held: Sequence[Event]) -> None:
        """Report each held-back event once, at WARNING: the arbiter's entry stays."""
        assert self.start is not None
        for event in held:
            what = describe(event, self.start)  # not the id: a fresh read of the tracker gives new ids
            if f"conflict: {what}" in self.reported:
                continue
            self.reported.add(f"conflict: {what}")
            log.warning(
                "follow: conflict: %s not submitted: the tracker's entry there was not made by follow "
                "(an arbiter's?), so it stays; run follow with --override to replace it with the source's",
                what,
            )

    def _audit(self, tf: TournamentFile) -> None:
        """Compare the source's own published places and values with tracker's; log when the verdict changes.

        A TRF carries official ranks (and ``XXT`` values): when they disagree
        with the standings of the same crosstable, the arbiter hears it once
        per change ("the official standings disagree on …"), not every poll.
        """
        if not tf.official:
            return
        found = audit(tf.opened, tf.events, tf.official)
        verdict = tuple(d.sentence() for d in found)
        previous, self.audited = self.audited, verdict
        if verdict == previous:
            return
        if found:
            log.warning(
                "follow: %s: the official standings disagree on %s",
                self.source.name,
                "; ".join(verdict),
            )
        elif previous:
            log.info("follow: %s: the official standings agree with tracker's", self.source.name)

    async def _read_tracker(self, tf: TournamentFile) -> list[Event]:
        """Load the ledger and start list from the tracker, opening the tournament if it has none."""
        baseline = await self.tracker.baseline(self.tournament)
        if baseline is not None:
            self.start = StartList(baseline.players)
            old = self.ledger
            self.ledger = Ledger(self.tournament, baseline.seq, dict(baseline.view.games), dict(baseline.view.byes))
            if old is not None:  # what this follower made and nobody changed since stays its own
                self.ledger.own = {
                    k
                    for k in old.own
                    if (k in old.games and old.games.get(k) == self.ledger.games.get(k))
                    or (k in old.byes and old.byes.get(k) == self.ledger.byes.get(k))
                }
            self.stale = False
            return []
        if self.ledger is not None and not self.tracker.can_read:
            self.stale = False
            return []
        (reply,) = await self.tracker.submit([tf.opened])
        if isinstance(reply, Rejected):
            if reply.code == "already-open":  # opened by someone else meanwhile: read it next time
                self.stale = True
            raise FollowError(f"the tracker refused to open {self.tournament!r}: {reply.reason} ({reply.code})")
        self.start = StartList.of(tf.opened.players)
        self.ledger = Ledger(self.tournament, reply.seq or 0)
        self.stale = False
        log.info("follow: %s (seq %s)", describe(tf.opened, self.start), reply.seq)
        return [tf.opened]

    def _note(
        self, events: Sequence[Event], replies: Sequence[Reply]
    ) -> tuple[tuple[Event, ...], tuple[tuple[Event, str, str], ...]]:
        """Apply acknowledged events to the ledger, remember refused ones; log both."""
        assert self.ledger is not None and self.start is not None
        acked: list[Event] = []
        rejected: list[tuple[Event, str, str]] = []
        for event, reply in zip(events, replies, strict=False):
            if isinstance(reply, Acked):
                self.ledger.apply(event)
                acked.append(event)
                seq = "" if reply.seq is None else f" (seq {reply.seq})"
                log.info("follow: %s%s", describe(event, self.start), seq)
            else:
                self.refused.add(event.id)
                rejected.append((event, reply.code, reply.reason))
                # the tracker's state is not what the ledger says: read it again before the next diff
                self.stale = self.tracker.can_read
                log.error("follow: %s rejected (%s): %s", describe(event, self.start), reply.code, reply.reason)
        return tuple(acked), tuple(rejected)

    async def run(self, interval: float, stop: asyncio.Event) -> None:
        """Poll every ``interval`` seconds until ``stop`` is set; back off exponentially on errors.

        While the source has games in progress and boards are followed, every
        board interval when that is shorter.  Never raises for a failed poll:
        the error is logged with the delay before the next try.
        """
        failures = 0
        while not stop.is_set():
            try:
                await self.poll()
            except BrokenRead:
                delay = interval  # the source answers: read it again at the usual pace (logged once, by poll)
            except (FollowError, TrackerUnavailable, FormatError) as exc:
                failures += 1
                delay = backoff(failures, interval)
                log.warning("follow: %s; retrying in %.3g s (failure %d)", exc, delay, failures)  # backed off
            else:
                if failures:
                    log.info("follow: recovered after %d failed attempt(s)", failures)
                failures = 0
                delay = interval
                if self.feed is not None and self.progress:  # games in progress: look as often as boards go
                    delay = min(interval, self.feed.interval)
                if self.source.pushes:  # its read waits for the next version itself
                    delay = 0.0
                elif self.doubts:  # a doubt is settled by reading again, not by waiting a whole interval
                    delay = min(delay, max(self.confirm.seconds / max(self.confirm.reads - 1, 1), 0.05))
            with suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await stop.wait()
        await self.end_boards()

    async def end_boards(self) -> int:
        """The follower stops: send each game's last board ``ended`` (stale at once, never shown live); how many.

        A tracker that cannot be reached is logged, not raised: its boards go stale by age instead.
        """
        if self.feed is None:
            return 0
        boards = self.feed.ended()
        if not boards:
            return 0
        try:
            await self.tracker.submit_boards(boards)
        except TrackerUnavailable as exc:
            log.warning("follow: the boards' end not sent (%s): they go stale by age", exc)
            return 0
        log.info("follow: stopped: %d board(s) ended", len(boards))
        return len(boards)


def _slots(event: Event) -> set[tuple[int, int]]:
    """The (round, player) slots a void or correction is about."""
    match event:
        case ResultVoided() | ResultCorrected() | ResultRecorded():
            return {(event.round, event.white), (event.round, event.black)}
        case ByeVoided() | ByeRecorded():
            return {(event.round, event.player)}
        case _:
            return set()


def backoff(failures: int, interval: float) -> float:
    """Seconds to wait after ``failures`` failed polls in a row: 2×, 4×, 8× … the interval, at most a minute.

    Never less than ``interval`` and never more than ``max(interval, 60)``.
    """
    return min(interval * (1 << min(failures, 32)), max(interval, MAX_BACKOFF))


def run_follow(
    source: str,
    tournament: str,
    *,
    url: str | None,
    token: str,
    broker: str | None,
    interval: float,
    once: bool,
    security: KafkaSecurity | None = None,
    broker_wait: float | None = None,
    override: bool = False,
    board_interval: float | None = None,
    engine: str | None = None,
    engine_nodes: int | None = None,
    trust_voids: bool = False,
    confirm_reads: int = CONFIRM_READS,
    confirm_seconds: float = CONFIRM_SECONDS,
    read_deadline: float = HTTP_TIMEOUT,
    stream: bool | None = None,
) -> int:
    """``tracker follow``: follow ``source`` into ``tournament``; return the exit code.

    ``url`` (with ``token``) submits over websockets; ``broker`` produces to
    Kafka (then ``url``, when also given, is only read for the tournament's
    state), with ``security`` (TLS, SASL) and waiting ``broker_wait`` seconds
    for the broker.  With ``once``: read once, submit, exit 0 when everything
    was acknowledged, every name matched and nothing was held back, 1
    otherwise.  ``override``: void or correct entries follow did not make
    (an arbiter's) when the source disagrees; without it they are reported
    as conflicts and left.  ``board_interval`` (seconds; ``None``: no boards)
    sends the games in progress of a PGN source as boards, at most one per
    game per interval; ``engine`` (a UCI engine's path) evaluates the
    positions the source does not, ``engine_nodes`` nodes each.  ``trust_voids``, ``confirm_reads`` and
    ``confirm_seconds``: when a result the source takes back or changes is believed (:class:`Confirm`).
    ``read_deadline``: seconds a whole read of an HTTP source may take (a stream's connection and headers).
    ``stream``: read the URL as a stream that stays open (``None``: when its path says ``stream``).
    Without ``once``: follow until
    SIGINT/SIGTERM, then exit 0.  Returns 2 for unusable options.  Raises
    nothing a user could cause: errors are logged.
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if not url and not broker:
        log.error("tracker follow: give --url ws://HOST:PORT/ws (with --token) or --broker kafka://HOST:PORT")
        return 2
    if url and not broker and not token:
        log.error("tracker follow: submitting over websockets needs the arbiter token (--token or $TRACKER_TOKEN)")
        return 2
    if interval <= 0:
        log.error("tracker follow: --interval must be positive")
        return 2
    reader = WebsocketTracker(url, token) if url else None
    tracker: Tracker
    if broker:
        tracker = KafkaTracker(broker, reader, security=security, wait=broker_wait)
    else:
        assert reader is not None  # checked above: url or broker
        tracker = reader
    if board_interval is not None and board_interval <= 0:
        log.error("tracker follow: --board-interval must be positive")
        return 2
    if read_deadline <= 0:
        log.error("tracker follow: --read-deadline must be positive")
        return 2
    if confirm_reads < 1 or confirm_seconds < 0:
        log.error("tracker follow: --confirm-reads must be at least 1 and --confirm-seconds not negative")
        return 2
    confirm = Confirm(reads=confirm_reads, seconds=confirm_seconds, trust_voids=trust_voids)
    feed = None
    if board_interval is not None:
        uci = Engine(engine, nodes=engine_nodes) if engine else None
        feed = BoardFeed(tournament, interval=board_interval, engine=uci)
    follower = Follower(
        source_for(source, deadline=read_deadline, stream=stream),
        tournament,
        tracker,
        override=override,
        boards=feed,
        confirm=confirm,
    )
    if once:
        return asyncio.run(_once(follower))
    return asyncio.run(_forever(follower, interval))


async def _once(follower: Follower) -> int:
    try:
        result = await follower.poll()
    except (FollowError, TrackerUnavailable, FormatError) as exc:
        log.error("follow: %s", exc)
        return 1
    finally:
        await _close(follower)
    kinds = Counter(type(e).__name__ for e in result.acked)
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) or "nothing new"
    log.info("follow: %s → %s: %s", follower.source.name, follower.tournament, summary)
    return 1 if result.rejected or result.unmatched or result.held else 0


async def _forever(follower: Follower, interval: float) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        log.info("follow: %s → %s every %g s (Ctrl-C to stop)", follower.source.name, follower.tournament, interval)
        await follower.run(interval, stop)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await _close(follower)
    return 0


async def _close(follower: Follower) -> None:
    await follower.aclose()
