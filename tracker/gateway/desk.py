"""The arbiters' shared desk: what every arbiter device of a tournament sees, kept on the server.

A rejected submission is a notice: the gateway keeps the last
:data:`KEEP` of each tournament, each a summary of the event (its type, id,
round, players, result: never the event itself, which may be a 500-player
opening) and the reason, cut to :data:`REASON` characters, so the desk is
bounded in bytes (a few kilobytes per tournament), not only in count.  An
arbiter gets the list when it subscribes and each new notice alone when it
is added, so a reloaded page or a second device shows the same rejections
(each once: notices carry an increasing id).  Kept in the gateway's memory: a restart
forgets them, as it forgets nothing else that matters (the events are in the
journal or on Kafka).
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from typing import Final, assert_never

from tracker.core.events import (
    BoardUpdated,
    ByeRecorded,
    ByeVoided,
    PlayerWithdrawn,
    ResultCorrected,
    ResultRecorded,
    ResultVoided,
    Submitted,
    TournamentOpened,
)
from tracker.core.phrases import Said
from tracker.protocol import NoticedEventJSON, NoticeJSON, said_json

KEEP: Final = 40  # notices per tournament
REASON: Final = 300  # characters of a reason kept
TOURNAMENTS: Final = 256  # tournaments with notices; the least recently noted one is forgotten first


class Desk:
    """Recent rejected submissions per tournament, bounded in count and in tournaments."""

    def __init__(self, keep: int = KEEP, tournaments: int = TOURNAMENTS) -> None:
        self.keep = keep
        self.tournaments = tournaments
        self._notices: OrderedDict[str, deque[NoticeJSON]] = OrderedDict()
        self._next = 1

    def note(self, event: Submitted, code: str, reason: str, said: Said | None = None) -> NoticeJSON:
        """Keep a rejection of ``event`` (``code`` for machines, ``reason`` for people, ``said`` as a phrase)."""
        kept = self._notices.pop(event.tournament, None) or deque(maxlen=self.keep)
        if len(reason) > REASON:
            reason = reason[: REASON - 1] + "…"
        notice: NoticeJSON = {
            "id": self._next,
            "at": round(time.time(), 3),
            "code": code,
            "reason": reason,
            "event": summary(event),
        }
        if said is not None:
            notice["reason_said"] = said_json(said)
        kept.append(notice)
        self._next += 1
        self._notices[event.tournament] = kept
        while len(self._notices) > self.tournaments:
            self._notices.popitem(last=False)
        return notice

    def notices(self, tournament: str) -> list[NoticeJSON]:
        """The tournament's kept notices, oldest first."""
        return list(self._notices.get(tournament, ()))


def summary(event: Submitted) -> NoticedEventJSON:
    """What a notice says of the event it refused: its type and id, and its round, players and result."""
    head: NoticedEventJSON = {"type": event_type(event), "id": event.id, "tournament": event.tournament}
    match event:
        case TournamentOpened():
            head["players"] = len(event.players)
        case ResultRecorded() | ResultCorrected():
            head["round"], head["white"], head["black"], head["result"] = (
                event.round,
                event.white,
                event.black,
                event.result,
            )
        case ResultVoided() | BoardUpdated():
            head["round"], head["white"], head["black"] = event.round, event.white, event.black
        case ByeRecorded():
            head["round"], head["player"], head["kind"] = event.round, event.player, event.kind
        case ByeVoided():
            head["round"], head["player"] = event.round, event.player
        case PlayerWithdrawn():
            head["player"], head["reason"] = event.player, event.reason[:REASON]
            if event.round is not None:
                head["round"] = event.round
        case _:
            assert_never(event)
    return head


def event_type(event: Submitted) -> str:
    """The event's ``type`` tag as it is written on the wire."""
    tag = type(event).__struct_config__.tag
    assert isinstance(tag, str)
    return tag
