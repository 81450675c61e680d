"""Prize categories: a named list of prizes for the players a rule admits (rating band, women, juniors).

A category is declared as ``NAME``, a ``RULE`` and its prizes per category place from the 1st, e.g. ``U2000``,
``rating<2000``, ``300, 150``.  The rules, read from the start list (``tournament_opened.players``):

``rating<N``
    rated below ``N`` by the start list's rating; an unrated player (rating 0) is not admitted to a rating
    band (as open tournaments usually rule: "Unrated players are not eligible for rating-restricted prizes").
``sex=w`` / ``sex=m``
    the start list's sex (TRF column 10: ``w`` or ``m``; case does not matter).
``age<N``
    under ``N`` years old on the event's start date (TRF record ``042``), by the birth date of the start list
    (TRF columns 70–79).  A birth year alone admits the player only when they are under ``N`` whatever their
    birthday (event year − birth year < ``N``); without a start date or a birth year nobody is admitted.

Who takes which prize (one prize per player) and how the prizes are shared is
:func:`tracker.core.worth.prizes.allocate`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from tracker.core.events import Player, TournamentOpened
from tracker.core.phrases import phrase

#: A category rule as written on the command line and on the wire (``tournament_opened.categories``).
RULE: Final = re.compile(r"^(rating<([0-9]{1,4})|sex=([mwMW])|age<([0-9]{1,3}))$")
#: The word the rows use for the place prizes (``prize_from``): no category may take it.
PLACE: Final = "place"

CATEGORY_RULE: Final = phrase(
    "worth.category_rule", "a prize category's rule is rating<N, sex=w, sex=m or age<N, not {rule}"
)
CATEGORY_NAME: Final = phrase(
    "worth.category_name", "a prize category needs a name of its own (not empty, not place, not used twice): {name}"
)

_DATE: Final = re.compile(r"(\d{4})[/.-](\d{1,2})[/.-](\d{1,2})")
_YEAR: Final = re.compile(r"(\d{4})")


@dataclass(frozen=True, slots=True)
class Category:
    """One category: its ``name``, its ``rule`` (module docstring), its prizes per category place (non-increasing)
    and the start numbers the rule admits (``eligible``, from :func:`category`)."""

    name: str
    rule: str
    prizes: tuple[Fraction, ...]
    eligible: frozenset[int]


def check_category(name: str, rule: str) -> None:
    """Raise :class:`ValueError` (its text :data:`CATEGORY_RULE` in English) for a rule outside the module
    docstring's, or an empty name or one equal to :data:`PLACE`."""
    if not RULE.match(rule):
        raise ValueError(CATEGORY_RULE.english.format(rule=rule))
    if not name.strip() or name.strip() == PLACE:
        raise ValueError(CATEGORY_NAME.english.format(name=repr(name)))


def start_date(records: Sequence[str]) -> tuple[int, int, int] | None:
    """The event's start date (record ``042``) as (year, month, day), or ``None``."""
    for record in records:
        if record.startswith("042"):
            match = _DATE.search(record[3:])
            return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None
    return None


def admits(rule: str, p: Player, start: tuple[int, int, int] | None) -> bool:
    """Whether ``rule`` (already checked) admits ``p`` for an event starting on ``start``."""
    match = RULE.match(rule)
    assert match is not None, rule
    rating, sex, age = match.group(2), match.group(3), match.group(4)
    if rating is not None:
        return 0 < p.rating < int(rating)
    if sex is not None:
        return p.sex.lower() == sex.lower()
    assert age is not None
    if start is None:
        return False
    if born := _DATE.search(p.birth):
        y, m, d = (int(x) for x in born.groups())
        years = start[0] - y - ((start[1], start[2]) < (m, d))
        return years < int(age)
    if year := _YEAR.search(p.birth):
        return start[0] - int(year.group(1)) < int(age)  # under N whatever the birthday
    return False


def category(
    name: str, rule: str, prizes: Sequence[Fraction], players: Sequence[Player], records: Sequence[str]
) -> Category:
    """The category ``name``/``rule``/``prizes`` with the start numbers of ``players`` its rule admits (the event's
    start date from ``records``).  Raises :class:`ValueError` as :func:`check_category` does."""
    check_category(name, rule)
    start = start_date(records)
    return Category(name.strip(), rule, tuple(prizes), frozenset(p.start_no for p in players if admits(rule, p, start)))


def declared(opened: TournamentOpened) -> tuple[Category, ...]:
    """The categories ``opened`` declares (``tournament_opened.categories``; none when unset), with whom each
    admits."""
    return tuple(
        category(c.name, c.rule, [Fraction(p) for p in c.prizes], opened.players, opened.records)
        for c in opened.categories or ()
    )


__all__ = [
    "CATEGORY_NAME",
    "CATEGORY_RULE",
    "PLACE",
    "RULE",
    "Category",
    "admits",
    "category",
    "check_category",
    "declared",
]
