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

from rich.console import Console

from tracker.cli.words import say
from tracker.core.crosstable import Tournament
from tracker.core.errors import TrackerError
from tracker.core.events import TournamentOpened
from tracker.core.phrases import phrase, render
from tracker.core.standings import Standings
from tracker.core.worth.categories import CATEGORY_NAME, CATEGORY_RULE, PLACE, RULE, Category, category, declared
from tracker.core.worth.norms import Norm, norms
from tracker.core.worth.prizes import PRIZES_NOT_EXACT, PRIZES_ORDER, Money, Sharing, check_prizes, money
from tracker.core.worth.rating import K_ASSUMED, assumed, rating_changes, shown_change
from tracker.i18n import Catalogue
from tracker.protocol.shapes import StandingsJSON, WorthRowJSON, prize_json, rating_json

PRIZES_FORM = phrase(
    "cli.prizes_form",
    "--prizes takes the prizes per place from the 1st, separated by commas (1000,600,400), not {text}",
)


CATEGORY_FORM = phrase(
    "cli.category_form",
    "--category takes NAME:RULE:PRIZES, e.g. U2000:rating<2000:300,150 or women:sex=w:200 or juniors:age<20:150, "
    "not {text}",
)


def parse_category(text: str, opened: TournamentOpened, taken: set[str], lang: Catalogue) -> Category:
    """One ``--category NAME:RULE:P1,P2,…`` as a :class:`Category` of ``opened``'s players (``taken``: the names
    already declared); raises :class:`TrackerError` (in ``lang``, one line naming what is wrong) for a bad one."""
    parts = text.rsplit(":", 2)
    if len(parts) != 3:
        raise TrackerError(say(CATEGORY_FORM(text=repr(text)), lang))
    name, rule, amounts = (part.strip() for part in parts)
    if not RULE.match(rule):
        raise TrackerError(say(CATEGORY_RULE(rule=repr(rule)), lang))
    if not name or name == PLACE or name in taken:
        raise TrackerError(say(CATEGORY_NAME(name=repr(name)), lang))
    try:
        prizes = tuple(Fraction(Decimal(part.strip())) for part in amounts.split(","))
    except (InvalidOperation, ValueError):
        raise TrackerError(say(CATEGORY_FORM(text=repr(text)), lang)) from None
    try:
        check_prizes(prizes)
    except ValueError:
        raise TrackerError(say(PRIZES_ORDER(prizes=amounts), lang)) from None
    return category(name, rule, prizes, opened.players, opened.records)


def category_settings(opened: TournamentOpened, asked: list[str] | None, lang: Catalogue) -> tuple[Category, ...]:
    """The prize categories to pay: ``--category`` (each as :func:`parse_category` reads it) when given, else the
    tournament's own (``tournament_opened.categories``)."""
    if not asked:
        return declared(opened)
    found: list[Category] = []
    for text in asked or ():
        found.append(parse_category(text, opened, {c.name for c in found}, lang))
    return tuple(found)


def category_json(c: Category) -> dict[str, object]:
    """A category as the JSON document lists it: name, rule, prizes, and the start numbers it admits."""
    return {"name": c.name, "rule": c.rule, "prizes": [float(p) for p in c.prizes], "eligible": sorted(c.eligible)}


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
    document: StandingsJSON,
    state: Tournament,
    table: Standings,
    prizes: tuple[Fraction, ...] | None,
    sharing: Sharing,
    categories: tuple[Category, ...] = (),
) -> list[str]:
    """Add the rating and, with ``prizes`` (and ``categories``), the money to ``document``'s rows; returns the
    notes to print."""
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
        found = {m.start_no: m for m in money(state, table, prizes, sharing, categories=categories)}
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


# -- the table (``tracker standings FILE --worth``) ---------------------------------------------------

PLAYER_HEAD = phrase("cli.worth.player", "Player")
WORTH_TITLE = phrase("cli.worth.title", "What results are worth")
WORTH_RATING = phrase("cli.worth.rating", "Rating ±")
WORTH_PERF = phrase("cli.worth.performance", "Perf.")
WORTH_NORMS = phrase("cli.worth.norms", "Norms")
WORTH_PRIZE = phrase("cli.worth.prize", "Prize")
WORTH_ABOUT = phrase(
    "cli.worth.about",
    "rating change over the rated games so far (FIDE B.02), performance rating, the title norms still in play "
    "over the whole remaining schedule (B.01); with prizes, the money paid or the least–most still possible",
)


def signed_one(value: float, lang: Catalogue) -> str:
    """A rating change as a rating report writes it: signed, one decimal, the language's decimal mark."""
    if value == 0:
        return f"{0:.1f}".replace(".", lang.decimal)
    return ("+" if value > 0 else "−") + f"{abs(value):.1f}".replace(".", lang.decimal)


def money_words(least: Fraction, most: Fraction, lang: Catalogue) -> str:
    """An amount, or the least–most of one, with the language's decimal mark (two decimals unless whole)."""

    def one(x: Fraction) -> str:
        return str(int(x)) if x.denominator == 1 else f"{float(x):.2f}".replace(".", lang.decimal)

    return one(least) if least == most else f"{one(least)}–{one(most)}"


def _from(m: Money) -> str:
    """A final prize's category in brackets (``300 (U2000)``); nothing for a place prize or none."""
    return f" ({m.least_from})" if m.final and m.least_from not in (None, PLACE) else ""


def print_worth(
    state: Tournament,
    table: Standings,
    console: Console,
    lang: Catalogue,
    prizes: tuple[Fraction, ...] | None,
    sharing: Sharing,
    categories: tuple[Category, ...] = (),
) -> None:
    """Print what results are worth to each player (the pages' card, :mod:`tracker.core.worth.live`): the rating
    change so far, the performance, each norm in play in a sentence, and with prizes the money (exact: the
    prize search's full budget)."""
    from tracker.cli.tables import Grid
    from tracker.core.projection.stakes import surname
    from tracker.core.worth.live import live_worth
    from tracker.core.worth.prizes import BUDGET

    worth = live_worth(state, table, prizes=prizes or (), sharing=sharing, budget=BUDGET, categories=categories)
    names = {p.start_no: p.name for p in state.opened.players}
    by_start = {w.rating.start_no: w for w in worth.players}
    with_money = any(w.money is not None for w in worth.players)
    headers = [say(c(), lang) for c in (PLAYER_HEAD, WORTH_RATING, WORTH_PERF, WORTH_NORMS)]
    if with_money:
        headers.append(say(WORTH_PRIZE(), lang))
    grid = Grid(say(WORTH_TITLE(), lang), headers, [False, True, True, False, *([True] if with_money else [])])
    for row in table.rows:
        w = by_start[row.start_no]
        c = w.rating
        norms = "; ".join(render(said, lambda no: surname(names[no]), lang) for said in w.said) or "–"
        cells = [
            row.name,
            "–" if (shown := shown_change(c)) is None else signed_one(shown, lang),
            "–" if c.performance is None else str(c.performance),
            norms,
        ]
        if with_money:
            m = w.money
            cells.append(
                "–" if m is None else money_words(m.least, m.most, lang) + ("" if m.exact else " ≈") + _from(m)
            )
        grid.add_row(*cells)
    grid.print(console)
    console.print(say(WORTH_ABOUT(), lang))
