"""``tracker standings --format json``: what a result is worth, added to the rows (:mod:`tracker.core.worth`).

Every row gets the player's rating change so far and performance (FIDE B.02, C.07 ``TPR``); with
``--prizes`` the money: ``prize`` once every game is in, else ``prize_min``/``prize_max`` with a scenario
each.  The notes say what was assumed (a K of 20) or not proven (a search out of budget), in English as
all JSON words are.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import cast

from tracker.cli.words import say
from tracker.core.crosstable import Tournament
from tracker.core.errors import TrackerError
from tracker.core.events import TournamentOpened
from tracker.core.phrases import phrase, render
from tracker.core.standings import Standings
from tracker.core.worth.norms import Norm, norms
from tracker.core.worth.prizes import PRIZES_NOT_EXACT, PRIZES_ORDER, Sharing, check_prizes, money
from tracker.core.worth.rating import K_ASSUMED, assumed, rating_changes
from tracker.i18n import Catalogue
from tracker.protocol.shapes import StandingsJSON, WorthRowJSON, prize_json, rating_json

PRIZES_FORM = phrase(
    "cli.prizes_form",
    "--prizes takes the prizes per place from the 1st, separated by commas (1000,600,400), not {text}",
)


def parse_prizes(text: str, lang: Catalogue) -> tuple[Fraction, ...]:
    """``--prizes``' value as exact amounts per place; raises :class:`TrackerError` (in ``lang``) for a bad one."""
    try:
        prizes = tuple(Fraction(Decimal(part.strip())) for part in text.split(","))
    except (InvalidOperation, ValueError):
        raise TrackerError(say(PRIZES_FORM(text=repr(text)), lang)) from None
    try:
        check_prizes(prizes)
    except ValueError:
        raise TrackerError(say(PRIZES_ORDER(prizes=text), lang)) from None
    return prizes


def prize_settings(
    opened: TournamentOpened, asked: str | None, sharing: Sharing | None, lang: Catalogue
) -> tuple[tuple[Fraction, ...] | None, Sharing]:
    """The prizes and sharing rule to pay: ``--prizes``/``--sharing`` when given, else what the tournament
    declares (``tournament_opened``'s ``prizes`` and ``sharing``), else none (and ``hort``)."""
    if asked:
        return parse_prizes(asked, lang), sharing or "hort"
    if opened.prizes:
        return tuple(Fraction(p) for p in opened.prizes), sharing or opened.sharing
    return None, sharing or "hort"


def add_worth(
    document: StandingsJSON, state: Tournament, table: Standings, prizes: tuple[Fraction, ...] | None, sharing: Sharing
) -> list[str]:
    """Add the rating and, with ``prizes``, the money to ``document``'s rows; returns the notes to print."""
    notes: list[str] = []
    changes = {c.start_no: c for c in rating_changes(state)}
    rows = [cast(WorthRowJSON, row) for row in document["standings"]]  # the same dicts, their worth added
    for row in rows:
        rating_json(row, changes[row["start_no"]])
    if defaulted := assumed(list(changes.values())):
        notes.append(render(K_ASSUMED(players=defaulted), str))
    by_player: dict[int, dict[str, dict[str, object]]] = {}
    for found_norm in norms(state):
        by_player.setdefault(found_norm.start_no, {})[found_norm.title] = norm_json(found_norm)
    for row in rows:
        if row["start_no"] in by_player:
            row["norms"] = by_player[row["start_no"]]
    if prizes is not None:
        found = {m.start_no: m for m in money(state, table, prizes, sharing)}
        for row in rows:
            prize_json(row, found[row["start_no"]])
        if unproven := [m.start_no for m in found.values() if not m.exact]:
            notes.append(render(PRIZES_NOT_EXACT(players=unproven), str))
    return notes


def norm_json(n: Norm) -> dict[str, object]:
    """One norm of a row (B.01, :mod:`tracker.core.worth.norms`): its status, the least score over the norm
    games (``null``: none reaches it), what is scored and still to play, the field's failing requirements,
    the opponents' average as B.01 counts it, and a scenario of the remaining games when still possible."""
    return {
        "status": n.status,
        "needed": None if n.needed is None else float(n.needed),
        "scored": float(n.scored),
        "games": n.games,
        "remaining": n.remaining,
        "average": n.average,
        "failing": list(n.failing),
        "scenario": [{"round": r, "white": w, "black": b, "result": res} for r, w, b, res in n.scenario],
    }
