"""The arbiters' shared desk: what every arbiter device of a tournament sees, kept on the server.

A rejected submission is a notice: the gateway keeps the last
:data:`KEEP` of each tournament and sends the list to every arbiter of that
tournament when one is added, and to an arbiter when it subscribes, so a
reloaded page or a second device shows the same rejections (each once:
notices carry an increasing id).  Kept in the gateway's memory: a restart
forgets them, as it forgets nothing else that matters (the events are in the
journal or on Kafka).
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from typing import Final

from tracker.core.events import Event
from tracker.protocol import NoticeJSON

KEEP: Final = 40  # notices per tournament
TOURNAMENTS: Final = 256  # tournaments with notices; the least recently noted one is forgotten first


class Desk:
    """Recent rejected submissions per tournament, bounded in count and in tournaments."""

    def __init__(self, keep: int = KEEP, tournaments: int = TOURNAMENTS) -> None:
        self.keep = keep
        self.tournaments = tournaments
        self._notices: OrderedDict[str, deque[NoticeJSON]] = OrderedDict()
        self._next = 1

    def note(self, event: Event, code: str, reason: str) -> None:
        """Keep a rejection of ``event`` (``code`` for machines, ``reason`` for people)."""
        kept = self._notices.pop(event.tournament, None) or deque(maxlen=self.keep)
        kept.append({"id": self._next, "at": round(time.time(), 3), "code": code, "reason": reason, "event": event})
        self._next += 1
        self._notices[event.tournament] = kept
        while len(self._notices) > self.tournaments:
            self._notices.popitem(last=False)

    def notices(self, tournament: str) -> list[NoticeJSON]:
        """The tournament's kept notices, oldest first."""
        return list(self._notices.get(tournament, ()))
