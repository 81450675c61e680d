"""The tie-break rulebook: one :class:`~tracker.core.tiebreaks.rule.Rule` per kind, in one table.

How this works
--------------

Every module of this package but :mod:`~tracker.core.tiebreaks.rule` defines
one kind and exports it as ``RULE``; the table (:data:`RULES`) is every such
module, found when the package is imported.  A rule holds what its kind
means everywhere: how its code is written, which C.07 editions define it,
its column in the live standings, its value on a complete crosstable and its
difference bounds for the projection (an allow-list: a kind without them is
refused by the projection, never ranked as another), and its words for the
pages.  The standings, the projection, the explanations on the pages and the
error messages all read the table; none of them names a kind.

**Adding a kind** is one new module here that defines ``RULE``, plus its
tests.  The codes (FIDE C.07, 2026 edition, as it applies to round robins;
TRF26 records 202/212) are:

``PTS`` the score (always first; added when a list omits it) · ``DE`` direct
encounter (§6) · ``WON`` games won at the board · ``SB`` Sonneborn-Berger
(§9.1) · ``KS``, ``KS/L±n`` Koya (§9.2, §14.5) · ``STD`` standard points
(2026 only) · ``BPG`` games with Black · ``BWG``
games won with Black · ``ARO`` average rating of the
opponents (§10.1) · ``TPR`` performance rating (ARO + B.02 8.1(a) dp) ·
``TPN`` pairing number · ``RTNG`` start-list rating.
Each module's docstring gives its article and its bye and forfeit policy.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from tracker.core.errors import EventRejected
from tracker.core.events import Rules
from tracker.core.order import TieBreak, parse_code_list
from tracker.core.phrases import ENGLISH, phrase
from tracker.core.tiebreaks.rule import Rule

_TABLE: dict[str, Rule] = {}
#: kind → its rule, in the order kinds are listed (``PTS`` first).
RULES: Mapping[str, Rule] = MappingProxyType(_TABLE)


def register(rule: Rule) -> None:
    """Add ``rule`` to the table (what importing the package does for each of its modules; a test may add a kind).

    Raises :class:`ValueError` when its kind is already in the table.
    """
    if rule.kind in _TABLE:
        raise ValueError(f"tie-break kind {rule.kind} is defined twice")
    _TABLE[rule.kind] = rule
    ordered = sorted(_TABLE.values(), key=lambda r: (r.listed, r.kind))
    _TABLE.clear()
    _TABLE.update((r.kind, r) for r in ordered)


def unregister(kind: str) -> None:
    """Remove a kind :func:`register` added (a test's own kind, once the test is done)."""
    _TABLE.pop(kind, None)


def _discover() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name == "rule" or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule):
            raise TypeError(f"{module.__name__} defines no RULE")
        register(rule)


_discover()


def rule_of(tb: TieBreak) -> Rule:
    """The rule of a parsed code (every :class:`TieBreak` :func:`parse_tiebreak` returns has one)."""
    return _TABLE[tb.kind]


UNKNOWN_CODE: Final = phrase("rejected.unknown_code", "unknown tie-break code {code}; tracker computes {codes:list}")
WRONG_EDITION: Final = phrase(
    "rejected.wrong_edition",
    "tie-break {code} is defined by the {defined} edition of C.07, not by the {rules} edition "
    "this tournament runs under (use rules {defined}, or leave it out)",
)


def _codes() -> list[str]:
    return [rule.syntax or rule.kind for rule in _TABLE.values()]


def known_codes() -> str:
    """The codes tracker computes, as a sentence lists them: "PTS, DE, …, TPN and RTNG"."""
    return ENGLISH.join(_codes())


def parse_tiebreak(text: str) -> TieBreak:
    """Parse one code (case-insensitive), e.g. ``"KS/L-2"``.

    Raises :class:`EventRejected` (code ``unknown-tiebreak``) for a code no
    rule reads, and for what a rule refuses to guess (``KS/L1``: see
    :mod:`~tracker.core.tiebreaks.ks`).
    """
    code = text.strip().upper()
    for rule in _TABLE.values():
        tb = rule.read(code)
        if tb is not None:
            return tb
    raise EventRejected(UNKNOWN_CODE(code=repr(text), codes=_codes()), code="unknown-tiebreak")


def parse_tiebreaks(codes: tuple[str, ...] | list[str], rules: Rules = "2026") -> tuple[TieBreak, ...]:
    """Parse an ordered list, put ``PTS`` first and drop repeats.

    Raises :class:`EventRejected` (``unknown-tiebreak``) as
    :func:`parse_tiebreak` does, and for a code the edition ``rules`` does not
    define (``STD`` under 2024).
    """
    parsed = [TieBreak("PTS", "PTS")]
    for text in codes:
        if not text.strip():
            continue
        tb = parse_tiebreak(text)
        editions = rule_of(tb).editions
        if rules not in editions:
            defined = " and ".join(sorted(editions))
            raise EventRejected(WRONG_EDITION(code=tb.code, defined=defined, rules=rules), code="unknown-tiebreak")
        if tb not in parsed:
            parsed.append(tb)
    return tuple(parsed)


__all__ = [
    "RULES",
    "Rule",
    "TieBreak",
    "known_codes",
    "parse_code_list",
    "parse_tiebreak",
    "parse_tiebreaks",
    "register",
    "rule_of",
    "unregister",
]
