"""The team tie-break rulebook: one :class:`~tracker.core.teams.tiebreaks.rule.TeamRule` per kind, in one table.

How this works
--------------

As the individual table (:mod:`tracker.core.tiebreaks`), and apart from it: a team rule reads a
:class:`~tracker.core.teams.view.TeamView`, never a player crosstable, so no consumer of the individual
table can take a team kind for one of its own (an allow-list each).  Every module of this package but
:mod:`~tracker.core.teams.tiebreaks.rule` defines one kind and exports it as ``RULE``.

The codes are the FIDE TEC tie-break server's (C.07 2026, Articles 11–13): ``MPTS`` match points,
``GPTS`` game points, ``MPVGP`` the secondary score, ``EDE`` (``EDEC``, ``EDET``, ``EDEB``, ``EDEBT``,
``EDEBB``, ``DE``) extended direct encounter, ``SB``/``SB:MP``/``SB:GP``/``ESB``/``EMMSB``/``EMGSB``/
``EGMSB``/``EGGSB`` Sonneborn-Berger, ``KS``/``KS:MP``/``KS:GP`` (with ``/L±n``) Koya, ``BC`` board count,
``TBR`` top board result, ``BBE`` bottom board elimination, ``TPN`` the team's number.

The **primary score** of an order is the first of ``MPTS`` and ``GPTS`` in it (match points when it names
neither); a code without a score of its own reads the primary one.  An order that does not start with
``MPTS`` or ``GPTS`` gets the primary one put first, as ``PTS`` is for players.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from types import MappingProxyType

from tracker.core.errors import EventRejected
from tracker.core.teams.tiebreaks.rule import Score, TeamRule, TeamTieBreak

_TABLE: dict[str, TeamRule] = {}
#: kind → its rule, in the order kinds are listed.
TEAM_RULES: Mapping[str, TeamRule] = MappingProxyType(_TABLE)


def _discover() -> None:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name == "rule" or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, TeamRule):
            raise TypeError(f"{module.__name__} defines no RULE")
        found.append(rule)
    for rule in sorted(found, key=lambda r: (r.listed, r.kind)):
        if rule.kind in _TABLE:
            raise ValueError(f"team tie-break kind {rule.kind} is defined twice")
        _TABLE[rule.kind] = rule


_discover()

_CODES = "MPTS, GPTS, MPVGP, EDE, SB:MP, SB:GP, ESB, EMMSB, EMGSB, EGMSB, EGGSB, KS:MP, KS:GP, BC, TBR, BBE, TPN"


def team_rule_of(tb: TeamTieBreak) -> TeamRule:
    return _TABLE[tb.kind]


def primary_of(codes: tuple[str, ...] | list[str]) -> Score:
    """The primary score of an order: the first of ``MPTS``/``GPTS`` (``MP`` when it names neither)."""
    for text in codes:
        code = text.strip().upper()
        if code in ("MPTS", "GPTS"):
            return "MP" if code == "MPTS" else "GP"
    return "MP"


def is_team_code(text: str) -> bool:
    """Whether ``text`` is a code of the team table (``PTS`` is in both tables)."""
    code = text.strip().upper()
    return any(rule.parse(code, "MP") is not None for rule in _TABLE.values())


def parse_team_tiebreak(text: str, primary: Score) -> TeamTieBreak:
    """One team code (case-insensitive) read with the order's ``primary`` score.

    Raises :class:`EventRejected` (code ``unknown-tiebreak``) for a code no team rule reads.
    """
    code = text.strip().upper()
    for rule in _TABLE.values():
        tb = rule.parse(code, primary)
        if tb is not None:
            return tb
    raise EventRejected(
        f"unknown team tie-break code {text.strip()!r}; tracker computes {_CODES}", code="unknown-tiebreak"
    )


def parse_team_tiebreaks(codes: tuple[str, ...] | list[str]) -> tuple[TeamTieBreak, ...]:
    """Parse a team order: the primary score first (added when the order does not start with a score),
    repeats dropped.  Raises :class:`EventRejected` as :func:`parse_team_tiebreak` does."""
    primary = primary_of(codes)
    parsed: list[TeamTieBreak] = []
    for text in codes:
        if not text.strip():
            continue
        tb = parse_team_tiebreak(text, primary)
        if not parsed and tb.kind not in ("MPTS", "GPTS"):
            parsed.append(parse_team_tiebreak("PTS", primary))
        if tb not in parsed:
            parsed.append(tb)
    if not parsed:
        parsed.append(parse_team_tiebreak("PTS", primary))
    return tuple(parsed)


__all__ = [
    "TEAM_RULES",
    "TeamRule",
    "TeamTieBreak",
    "is_team_code",
    "parse_team_tiebreak",
    "parse_team_tiebreaks",
    "primary_of",
    "team_rule_of",
]
