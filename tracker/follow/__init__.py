"""``tracker follow``: turn a live PGN source or an arbiter program's TRF file into events.

How this works
--------------

A :class:`Follower` polls a :class:`Source` — a PGN over HTTP(S), fetched
with ``If-None-Match``/``If-Modified-Since`` (:class:`HttpSource`), or a
local PGN/TRF file gated by its size, mtime and content hash
(:class:`FileSource`) — and parses every new version with
:func:`tracker.formats.read_tournament_text`.  The source's players are
matched **by name** to the tournament's start list (:class:`StartList`:
"Last, First" = "First Last", case, spacing, punctuation and diacritics
ignored; a name that matches nobody, or several players, is reported and
its games are left out, never guessed).  That gives a :class:`View`: the
results keyed by ``(round, white, black)`` and the byes keyed by
``(round, player)``, in the tournament's start numbers.

A :class:`Ledger` holds what the tracker has: read from the tracker's
snapshot when the follower (re)connects, then kept up to date with every
acknowledged event.  :meth:`Ledger.changes` compares a view with it and
emits only the differences, voids first:

- a game the tracker lacks → ``result_recorded``; a different result →
  ``result_corrected``;
- a game seen in the previous read that is gone now, or a tracker entry in a
  slot (round, player) the source fills differently → ``result_voided``;
- byes alike: ``bye_recorded``, ``bye_voided`` (a changed kind is voided and
  recorded again).

Games are voided only when they disappear from the source, never because the
tracker has games the source never listed (an arbiter's manual entries, or
rounds before the broadcast started).  Re-reading an unchanged source emits
nothing.

Event ids are deterministic: ``{tournament}/follow/r{round}/{white}-{black}/{verb}-{digest}``
where the digest hashes the change (old and new result), the tracker's seq
when the ledger was read and how many times this follower changed that game
before.  A retry after a lost connection re-sends the same ids (the tracker
acknowledges them again and changes nothing); a restarted follower reads the
tracker's state first, so it does not submit again what is already there;
a result changed back and forth gets a new id each time.

Submitting goes through a websocket with acknowledgements
(:class:`WebsocketTracker`, through :class:`tracker.client.TrackerClient`: one
request at a time, each event acknowledged before the next is sent) or, with ``--broker``, to the results topic
(:class:`KafkaTracker`, via :func:`tracker.kafka.producer.produce_events`,
imported lazily).
Without ``--url`` a broker follower cannot read the tracker's state: it
starts from an empty ledger (first recordings keep their ids across
restarts, so re-sending them is harmless) and opens the tournament from
the source.  The first read of a source opens the tournament when the
tracker does not have it yet.

Errors (HTTP status, unreachable tracker, unreadable file) are logged and
retried with exponential back-off (:func:`backoff`); ``--once`` reads once,
submits once and exits non-zero on any error, rejection or unmatched name.
"""

from tracker.client import Acked, Rejected, TrackerUnavailable
from tracker.follow.errors import BrokenRead, FollowError, SourceError
from tracker.follow.follower import AT_ONCE, Confirm, Follower, PollResult, backoff, run_follow
from tracker.follow.ledger import Ledger, View, view_of, view_of_rows
from tracker.follow.names import StartList, name_key, token_key
from tracker.follow.sources import FileSource, HttpSource, Source, source_for
from tracker.follow.trackers import Baseline, KafkaTracker, WebsocketTracker

__all__ = [
    "AT_ONCE",
    "Acked",
    "Baseline",
    "BrokenRead",
    "Confirm",
    "FileSource",
    "FollowError",
    "Follower",
    "HttpSource",
    "KafkaTracker",
    "Ledger",
    "PollResult",
    "Rejected",
    "Source",
    "SourceError",
    "StartList",
    "TrackerUnavailable",
    "View",
    "WebsocketTracker",
    "backoff",
    "name_key",
    "run_follow",
    "source_for",
    "token_key",
    "view_of",
    "view_of_rows",
]
