"""The JSON shapes of what tracker computes: standings rows, projections, stakes and chances.

One function per value turns a core result into the ``TypedDict`` it is
sent as (``tracker standings --format json``, the HTTP API and every
websocket message share them); the messages that carry these shapes are in
:mod:`tracker.protocol.messages`.  Numbers are JSON numbers: the core's exact
fractions are halves and quarters (exact in binary) or short decimals.
:func:`encode` is the one encoder (decimals as numbers).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from functools import lru_cache
from itertools import chain, repeat, starmap
from operator import attrgetter
from typing import Any, Final, Literal, NotRequired, TypedDict, cast

import msgspec

from tracker.core.codes import RESULT_OF_CODES
from tracker.core.events import GameResult
from tracker.core.phrases import Said
from tracker.core.projection import LineStatus, Projection, Scenario, Status
from tracker.core.projection.chances import Chances
from tracker.core.projection.stakes import LineState
from tracker.core.standings import Row, Standings, Table
from tracker.core.teams.stakes import BoardDecides
from tracker.core.teams.standings import TeamStandings
from tracker.core.teams.view import BoardGame, Match, Side, TeamView
from tracker.core.tiebreaks import parse_tiebreak, rule_of
from tracker.core.worth.live import LiveWorth, NormStake, PlayerWorth
from tracker.core.worth.prizes import Money, MoneyStake
from tracker.core.worth.rating import RatingChange, shown_change

_encoder: Final = msgspec.json.Encoder(decimal_format="number")


# -- standings rows (``tracker standings --format json``, the HTTP API, snapshots and updates) ----------


class RowJSON(TypedDict):
    rank: int
    start_no: int
    name: str
    points: float
    tiebreaks: dict[str, float]
    games: int
    withdrawn: bool
    qualified: bool
    line: float
    results: list[tuple[int, int, str, str]]


class WorthRowJSON(RowJSON, total=False):
    """A ``tracker standings --format json`` row with what a result is worth (:mod:`tracker.core.worth`); the
    websocket rows are :class:`RowJSON` without these."""

    rating_change: float | None
    performance: int | None
    k: int | None
    k_from: str | None
    prize: float
    prize_min: float
    prize_max: float
    prize_exact: bool
    prize_scenarios: dict[str, list[ScenarioGameJSON]]
    #: with prize categories declared: the list paying ``prize`` (``place`` or a category's name; ``null``: no
    #: money), and while games remain the lists paying ``prize_min`` and ``prize_max``
    prize_from: str | None
    prize_min_from: str | None
    prize_max_from: str | None
    #: per title (GM, IM, WGM, WIM) above the player's own: the norm (B.01), see tracker.cli.worth.norm_json
    norms: dict[str, dict[str, object]]


class TeamRowJSON(TypedDict):
    """One team's line in a team event's standings: ``team`` is its number in the file's team order; the
    tie-breaks are keyed by the team order's codes (``MPTS``, ``GPTS``, ``EDE``, ``SB:MP`` …)."""

    rank: int
    team: int
    name: str
    match_points: float
    game_points: float
    tiebreaks: dict[str, float]


class BoardJSON(TypedDict):
    """One board of a match: White's and Black's start numbers and the result (``null`` while pending)."""

    board: int
    white: int | None
    black: int | None
    result: GameResult | None


class MatchSideJSON(TypedDict):
    """One team in one round: its number and name, its game points so far, its match points (0 until the
    match is complete)."""

    team: int
    name: str
    game_points: float
    match_points: float


class MatchJSON(TypedDict):
    """A match: ``first`` is the first-named team, ``second`` the other — ``null`` for a team bye (then
    ``boards`` is empty); ``complete`` once every board is in."""

    first: MatchSideJSON
    second: MatchSideJSON | None
    boards: list[BoardJSON]
    complete: bool


class RoundMatchesJSON(TypedDict):
    """The matches of one round that have a board in (and its team byes), in the order the view made them."""

    round: int
    matches: list[MatchJSON]


class StandingsJSON(TypedDict):
    tournament: str
    name: str
    seq: int
    provisional: bool
    basis: str
    max_basis: str
    rules: str
    standings: list[RowJSON]
    #: a team event's teams, beside the players' rows (:func:`team_rows_json`)
    teams: NotRequired[list[TeamRowJSON]]
    #: a team event's matches per round (:func:`team_matches_json`)
    matches: NotRequired[list[RoundMatchesJSON]]


def standings_json(s: Standings) -> StandingsJSON:
    """The standings JSON of `tracker standings --format json`: rows with rank, start_no, name, points, tiebreaks."""
    return {
        "tournament": s.tournament,
        "name": s.name,
        "seq": s.seq,
        "provisional": s.provisional,
        "basis": s.basis,
        "max_basis": s.max_basis,
        "rules": s.rules,
        "standings": [row_json(s.codes, row) for row in s.rows],
    }


def team_rows_json(s: TeamStandings) -> list[TeamRowJSON]:
    """The ``"teams"`` rows of a team event's standings, in standings order."""
    return [
        {
            "rank": row.rank,
            "team": row.team,
            "name": row.name,
            "match_points": _number(row.match_points),
            "game_points": _number(row.game_points),
            "tiebreaks": {code: _number(v) for code, v in zip(s.codes, row.tiebreaks, strict=True)},
        }
        for row in s.rows
    ]


def team_matches_json(s: TeamStandings) -> list[RoundMatchesJSON]:
    """The ``"matches"`` of a team event's standings: per round, its matches from the team view, each team
    bye as an entry of its own, then the round to play's scheduled matches with nothing in yet (every board
    pending, its players from the schedule).

    A match not complete lists every board: those in as the view reads them, the rest ``null`` results
    with the players the teams' board order leaves for them (still unknown: ``null``).  Raises nothing.
    """
    v = s.view
    rounds: dict[int, list[MatchJSON]] = {}
    for m in v.matches:
        rounds.setdefault(m.round, []).append(_match_json(v, m))
    for k, sides in enumerate(v.sides):
        for r, side in sides.items():
            if not side.is_match:
                rounds.setdefault(r, []).append(
                    {"first": _side_json(v, k, side), "second": None, "boards": [], "complete": side.complete}
                )
    teams = v.setup.teams
    for u in s.upcoming:  # the round to play's matches with nothing in yet, from the schedule
        rounds.setdefault(u.round, []).append(
            {
                "first": {
                    "team": teams[u.first].number,
                    "name": teams[u.first].name,
                    "game_points": 0.0,
                    "match_points": 0.0,
                },
                "second": {
                    "team": teams[u.second].number,
                    "name": teams[u.second].name,
                    "game_points": 0.0,
                    "match_points": 0.0,
                },
                "boards": [{"board": b, "white": w, "black": bl, "result": None} for b, w, bl in u.boards],
                "complete": False,
            }
        )
    return [{"round": r, "matches": rounds[r]} for r in sorted(rounds)]


def _side_json(v: TeamView, k: int, side: Side) -> MatchSideJSON:
    team = v.setup.teams[k]
    return {"team": team.number, "name": team.name, "game_points": _number(side.gp), "match_points": _number(side.mp)}


def _match_json(v: TeamView, m: Match) -> MatchJSON:
    first, second = m.first, m.second
    boards: list[BoardJSON] = []
    for g in m.boards:
        white, black = (g.first, g.second) if g.first_white else (g.second, g.first)
        boards.append({"board": g.board, "white": white, "black": black, "result": _result(g.first_white, g)})
    if not m.complete:
        first, second, boards = _in_progress(v, m, boards)
    return {
        "first": _side_json(v, first, v.sides[first][m.round]),
        "second": _side_json(v, second, v.sides[second][m.round]),
        "boards": boards,
        "complete": m.complete,
    }


def _result(first_white: bool, g: BoardGame) -> GameResult:
    codes = (g.first_code, g.second_code) if first_white else (g.second_code, g.first_code)
    return RESULT_OF_CODES[codes][0]


def _in_progress(v: TeamView, m: Match, boards: list[BoardJSON]) -> tuple[int, int, list[BoardJSON]]:
    """An incomplete match board by board, the boards without a game in as ``null`` results.

    The view numbers a match's boards by the players with something in so far (right once the match is
    complete), so while it is played a game that came in before the boards above it is read a board too
    high, and the first-named team from it.  When neither team has a reserve, a player's board is their
    place in the team: the games are put on those boards, the first-named team is the one whose player has
    the colour sequence's colour there, and the other boards are filled from the two line-ups.  With a
    reserve the line-up is not known before the games are in: the view's boards, and the rest pending with
    the players not seated yet in board order.
    """
    teams, n = v.setup.teams, v.boards
    a, b = teams[m.first].players, teams[m.second].players
    if len(a) == n == len(b) and all(a.index(g.first) == b.index(g.second) for g in m.boards):
        first, second = m.first, m.second
        if m.boards:
            g = m.boards[0]
            sequence_white = v.setup.colour(a.index(g.first) + 1, n) == "W"
            if g.first_white != sequence_white:
                first, second, a, b = second, first, b, a
        by_board = {a.index(g.first) + 1 if g.first in a else b.index(g.first) + 1: g for g in m.boards}
        placed: list[BoardJSON] = []
        for board in range(1, n + 1):
            ours, theirs = a[board - 1], b[board - 1]
            first_white = v.setup.colour(board, n) == "W"
            white, black = (ours, theirs) if first_white else (theirs, ours)
            game = by_board.get(board)
            placed.append(
                {
                    "board": board,
                    "white": white,
                    "black": black,
                    "result": None if game is None else _result(game.first_white, game),
                }
            )
        return first, second, placed
    taken = {g.board for g in m.boards}
    seated = {p for g in m.boards for p in (g.first, g.second)}
    free = [[p for p in players if p not in seated] for players in (a, b)]
    for board in range(1, n + 1):
        if board in taken:
            continue
        mine = free[0].pop(0) if free[0] else None
        other = free[1].pop(0) if free[1] else None
        seats = (mine, other) if v.setup.colour(board, n) == "W" else (other, mine)
        boards.append({"board": board, "white": seats[0], "black": seats[1], "result": None})
    boards.sort(key=lambda x: x["board"])
    return m.first, m.second, boards


def rating_json(row: WorthRowJSON, c: RatingChange) -> None:
    """Add ``c`` (the row's player's rating change so far, B.02) to ``row``: the change to one decimal, the
    performance (TPR), the K used and how it was chosen; ``null`` change for an unrated player."""
    row["rating_change"] = shown_change(c)
    row["performance"] = c.performance
    row["k"] = c.k
    row["k_from"] = c.k_from


def prize_json(row: WorthRowJSON, money: Money) -> None:
    """Add ``money`` (the row's player's prize, :mod:`tracker.core.worth.prizes`) to ``row``: ``prize`` once the
    standings are final, else ``prize_min``/``prize_max`` with a scenario each and whether both are exact; with
    categories declared, the list each comes from (``prize_from``, ``prize_min_from``, ``prize_max_from``)."""
    if money.final:
        row["prize"] = _number(money.least)
        if money.categories:
            row["prize_from"] = money.least_from
        return
    row["prize_min"] = _number(money.least)
    row["prize_max"] = _number(money.most)
    if money.categories:
        row["prize_min_from"] = money.least_from
        row["prize_max_from"] = money.most_from
    row["prize_exact"] = money.exact
    row["prize_scenarios"] = {
        "prize_min": [_game_json(g) for g in money.least_scenario],
        "prize_max": [_game_json(g) for g in money.most_scenario],
    }


def _game_json(g: tuple[int | None, int, int, GameResult]) -> ScenarioGameJSON:
    return {"round": g[0], "white": g[1], "black": g[2], "result": g[3]}


def row_json(codes: tuple[str, ...], row: Row) -> RowJSON:
    return {
        "rank": row.rank,
        "start_no": row.start_no,
        "name": row.name,
        "points": _value(row.points),
        "tiebreaks": dict(zip(codes, map(_value, row.tiebreaks), strict=True)),
        "games": row.games,
        "withdrawn": row.withdrawn,
        "qualified": row.qualified,
        "line": _value(row.line),
        "results": list(row.results),
    }


def _number(value: Fraction) -> float:
    # float(value) exactly (Rational.__float__ divides the same two ints), without its two int() calls and
    # the method lookups: a worker converts about 70 numbers per update, one update per result.
    return value.numerator / value.denominator


def _value(value: Fraction) -> float:
    """:func:`_number` of a standings value (always a :class:`Fraction`: :func:`tracker.core.standings.standings`
    makes them), from the slots behind the ``numerator``/``denominator`` properties (CPython's fractions):
    a third of the cost, 60 values per update of a 10-player table."""
    return value._numerator / value._denominator  # type: ignore[attr-defined,no-any-return]


# -- projections -------------------------------------------------------------------------------


class OpponentStatusJSON(TypedDict):
    start_no: int
    status: Status


class ScenarioGameJSON(TypedDict):
    round: int | None
    white: int
    black: int
    result: GameResult


class ScenariosJSON(TypedDict):
    """For each extreme, a result for every remaining game that reaches it."""

    rank_best: list[ScenarioGameJSON]
    rank_worst: list[ScenarioGameJSON]
    ks_min: list[ScenarioGameJSON]
    ks_max: list[ScenarioGameJSON]


class ExactJSON(TypedDict):
    """For each extreme: true when the value is exact (its scenario reaches it), false when it is a bound."""

    rank_best: bool
    rank_worst: bool
    ks_min: bool
    ks_max: bool


class AttainedJSON(TypedDict):
    """For each extreme: what its scenario reaches (equal to the value when exact)."""

    rank_best: float
    rank_worst: float
    ks_min: float
    ks_max: float


class LineProjectionJSON(TypedDict):
    """One declared line (the first ``places`` places) for one player, with a scenario per possible side."""

    places: int
    name: str
    status: LineStatus
    inside: list[ScenarioGameJSON] | None
    outside: list[ScenarioGameJSON] | None
    playoff: list[ScenarioGameJSON] | None


class PlayoffProjectionJSON(TypedDict):
    """Membership of the play-off for 1st; ``secured``: at least tied first on points in every outcome."""

    status: Status
    scenario: list[ScenarioGameJSON] | None
    secured: bool
    exact: bool


class PlayerProjectionJSON(TypedDict):
    start_no: int
    ks_min: float
    ks_max: float
    rank_best: int
    rank_worst: int
    points_min: float
    points_max: float
    qualification: Status
    opponents: list[OpponentStatusJSON]
    scenarios: ScenariosJSON
    exact: ExactJSON
    attained: AttainedJSON
    lines: list[LineProjectionJSON]
    playoff: PlayoffProjectionJSON | None


class KoyaRangeJSON(TypedDict):
    start_no: int
    min: float
    max: float


class RankRangeJSON(TypedDict):
    start_no: int
    best: int
    worst: int


class OutcomeEffectJSON(TypedDict):
    result: GameResult
    ks: list[KoyaRangeJSON]
    ranks: list[RankRangeJSON]


class GameProjectionJSON(TypedDict):
    round: int | None
    white: int
    black: int
    outcomes: list[OutcomeEffectJSON]
    exact: bool


class LineJSON(TypedDict):
    places: int
    name: str


class ProjectionJSON(TypedDict):
    tournament: str
    seq: int
    exact: bool
    remaining: int
    line: float
    players: list[PlayerProjectionJSON]
    games: list[GameProjectionJSON]
    lines: list[LineJSON]
    playoff: bool


def scenario_json(scenario: Scenario) -> list[ScenarioGameJSON]:
    """A scenario as the list of remaining games with their results."""
    return [{"round": g.round, "white": g.white, "black": g.black, "result": g.result} for g in scenario]


def _maybe(scenario: Scenario | None) -> list[ScenarioGameJSON] | None:
    return None if scenario is None else scenario_json(scenario)


def projection_json(p: Projection) -> ProjectionJSON:
    """The JSON shape sent to arbiters: points as JSON numbers, maps as lists."""
    return {
        "tournament": p.tournament,
        "seq": p.seq,
        "exact": p.exact,
        "remaining": p.remaining,
        "line": float(p.line),
        "players": [
            {
                "start_no": pp.start_no,
                "ks_min": float(pp.ks_min),
                "ks_max": float(pp.ks_max),
                "rank_best": pp.rank_best,
                "rank_worst": pp.rank_worst,
                "points_min": float(pp.points_min),
                "points_max": float(pp.points_max),
                "qualification": pp.qualification,
                "opponents": [{"start_no": o.start_no, "status": o.status} for o in pp.opponents],
                "scenarios": {
                    "rank_best": scenario_json(pp.reached["rank_best"].scenario),
                    "rank_worst": scenario_json(pp.reached["rank_worst"].scenario),
                    "ks_min": scenario_json(pp.reached["ks_min"].scenario),
                    "ks_max": scenario_json(pp.reached["ks_max"].scenario),
                },
                "exact": {
                    "rank_best": pp.reached["rank_best"].exact,
                    "rank_worst": pp.reached["rank_worst"].exact,
                    "ks_min": pp.reached["ks_min"].exact,
                    "ks_max": pp.reached["ks_max"].exact,
                },
                "attained": {
                    "rank_best": float(pp.reached["rank_best"].attained),
                    "rank_worst": float(pp.reached["rank_worst"].attained),
                    "ks_min": float(pp.reached["ks_min"].attained),
                    "ks_max": float(pp.reached["ks_max"].attained),
                },
                "lines": [
                    {
                        "places": line.places,
                        "name": line.name,
                        "status": line.status,
                        "inside": _maybe(line.inside),
                        "outside": _maybe(line.outside),
                        "playoff": _maybe(line.playoff),
                    }
                    for line in pp.lines
                ],
                "playoff": None
                if pp.playoff is None
                else {
                    "status": pp.playoff.status,
                    "scenario": _maybe(pp.playoff.scenario),
                    "secured": pp.playoff.secured,
                    "exact": pp.playoff.exact,
                },
            }
            for pp in p.players
        ],
        "games": [
            {
                "round": g.round,
                "white": g.white,
                "black": g.black,
                "outcomes": [
                    {
                        "result": o.result,
                        "ks": [{"start_no": s, "min": float(lo), "max": float(hi)} for s, (lo, hi) in o.ks.items()],
                        "ranks": [{"start_no": s, "best": b, "worst": w} for s, (b, w) in o.ranks.items()],
                    }
                    for o in g.outcomes
                ],
                "exact": g.exact,
            }
            for g in p.games
        ],
        "lines": [{"places": places, "name": name} for places, name in p.lines],
        "playoff": p.playoff,
    }


class StandingsPayload(StandingsJSON):
    """:class:`StandingsJSON` and what live clients need beside it: rounds, games played, the codes, the scoring."""

    rounds: int
    games_played: int
    codes: list[str]
    scoring: dict[str, float]


class SaidJSON(TypedDict):
    """A sentence as data (:class:`tracker.core.phrases.Said`): a catalogue key and the arguments to write into it.

    An argument is a start number (written as the player's name), a list of them, a result code, points
    (exact: halves and quarters), a line's places or declared name, or plain text and numbers; the key's
    template in the viewer's language says which (``/static/i18n/<lang>.json``, docs/protocol.md).
    """

    key: str
    args: NotRequired[dict[str, Any]]  # values: see above (a decoder cannot tell two kinds of list apart)


def said_json(said: Said) -> SaidJSON:
    """A :class:`~tracker.core.phrases.Said` as its JSON (``args`` left out when it has none)."""
    body: SaidJSON = {"key": said.key}
    if said.args:
        body["args"] = msgspec.to_builtins(said.args)
    return body


class ColumnJSON(TypedDict):
    """What a shown column is, for people: its name, what it counts, which way is better (from its rule)."""

    code: str
    name: str
    what: str
    better: str
    lower_first: bool


@lru_cache(maxsize=256)
def _words(codes: tuple[str, ...]) -> tuple[ColumnJSON, ...]:
    found: list[ColumnJSON] = []
    for code in codes:
        tb = parse_tiebreak(code)
        w = rule_of(tb).words(tb)
        found.append({"code": w.code, "name": w.name, "what": w.what, "better": w.better, "lower_first": w.lower_first})
    return tuple(found)


def column_words(codes: list[str] | tuple[str, ...]) -> list[ColumnJSON]:
    """The words of each shown code (a standings payload's ``codes``), as the tie-break rules give them."""
    return list(_words(tuple(codes)))


def standings_payload(s: Standings) -> StandingsPayload:
    """The standings JSON every interface shares (the HTTP standings page, snapshots and updates); a team
    event's carries its ``"teams"`` rows and its ``"matches"`` last."""
    return _payload(s, [row_json(s.codes, row) for row in s.rows])


def encoding_payload(s: Standings) -> StandingsPayload:
    """:func:`standings_payload` to be encoded, not read: its ``"standings"`` rows are already JSON.

    Encoding it (:func:`encode`, :func:`~tracker.protocol.messages.update_message`,
    :func:`~tracker.protocol.messages.snapshot_message`) gives the same bytes as encoding
    :func:`standings_payload`'s, at a fraction of the cost (:func:`rows_raw`): what a worker builds per
    result.  Its ``"standings"`` and ``"scoring"`` are :class:`msgspec.Raw` JSON, not rows and points: give
    it to nothing that reads them.
    """
    rows = rows_raw(s) if s.table is None else table_raw(s.codes, s.table)
    return _payload(s, cast(list[RowJSON], rows), cast(dict[str, float], _scoring_raw(s.scoring)))


def _payload(s: Standings, rows: list[RowJSON], scoring: dict[str, float] | None = None) -> StandingsPayload:
    payload: StandingsPayload = {  # standings_json's keys, then the live clients'
        "tournament": s.tournament,
        "name": s.name,
        "seq": s.seq,
        "provisional": s.provisional,
        "basis": s.basis,
        "max_basis": s.max_basis,
        "rules": s.rules,
        "standings": rows,
        "rounds": s.rounds,
        "games_played": (sum(map(_games, s.rows)) if s.table is None else sum(s.table.games)) // 2,
        "codes": list(s.codes),
        "scoring": _scoring_json(s.scoring) if scoring is None else scoring,
    }
    if s.teams is not None:
        payload["teams"] = team_rows_json(s.teams)
        payload["matches"] = team_matches_json(s.teams)
    return payload


_games: Final = attrgetter("games")


class _RowOut(msgspec.Struct):
    """:class:`RowJSON` as a struct whose numbers are already JSON: the same fields in the same order, so it
    encodes to the same bytes."""

    rank: int
    start_no: int
    name: str
    points: msgspec.Raw
    tiebreaks: msgspec.Struct  # a :func:`_tiebreaks_out` struct: the codes as its fields, in order
    games: int
    withdrawn: bool
    qualified: bool
    line: msgspec.Raw
    results: tuple[tuple[int, int, str, str], ...]


#: ``id(value) → the JSON of float(value)`` for the standings' Fractions, and the Fractions themselves (held, so
#: that an id in the table is always its own value's): :func:`tracker.core.standings.exact` makes each value
#: once, so a table's values are a few hundred objects, and writing a float costs the encoder ~800
#: instructions where a lookup costs a few dozen.  Cleared, both at once, when it holds
#: :data:`_NUMBERS_HELD` values.
_number_json: Final[dict[int, msgspec.Raw]] = {}
_numbers_held: Final[list[Fraction]] = []
_NUMBERS_HELD: Final = 8192


def _numbers(values: Sequence[Fraction]) -> list[msgspec.Raw]:
    """The JSON of :func:`_value` of each of ``values``, as the encoder writes the float (byte for byte)."""
    ids = list(map(id, values))
    try:
        return list(map(_number_json.__getitem__, ids))
    except KeyError:
        pass
    if len(_numbers_held) >= _NUMBERS_HELD:
        _number_json.clear()
        _numbers_held.clear()
    for value, key in zip(values, ids, strict=True):
        if key not in _number_json:
            _numbers_held.append(value)
            _number_json[key] = msgspec.Raw(_encoder.encode(_value(value)))
    return list(map(_number_json.__getitem__, ids))


def rows_raw(s: Standings) -> msgspec.Raw:
    """The JSON of :func:`standings_json`'s ``"standings"`` rows (``row_json`` of each), byte for byte.

    Built column by column in C loops (the rows transposed, one :class:`_RowOut` per row, its tie-breaks one
    :func:`_tiebreaks_out` struct) with each number's JSON written once per value (:func:`_numbers`, one call
    for the points, the tie-breaks and the lines), and encoded once: a worker encodes a table per result, and
    a dict per row, a Python call per value and the encoder's writing of every float cost several times more.
    """
    rows = s.rows
    if not rows:
        return msgspec.Raw(b"[]")
    n = len(rows)
    rank, start_no, name, points, tiebreaks, games, withdrawn, qualified, line, results = zip(*rows, strict=True)
    codes = s.codes
    numbers = _numbers([*points, *line, *chain.from_iterable(tiebreaks)])
    shown: Iterable[msgspec.Struct]
    if codes:
        values = iter(numbers[2 * n :])
        shown = starmap(_tiebreaks_out(codes), zip(*[values] * len(codes), strict=True))
    else:
        shown = repeat(_NO_TIEBREAKS, n)
    out = list(
        map(_RowOut, rank, start_no, name, numbers[:n], shown, games, withdrawn, qualified, numbers[n : 2 * n], results)
    )
    return msgspec.Raw(_encoder.encode(out))


def table_raw(codes: tuple[str, ...], table: Table) -> msgspec.Raw:
    """:func:`rows_raw` of standings with this ``table`` (:attr:`Standings.table`), byte for byte, from its integer
    columns: each number's JSON looked up by its units (:func:`_unit_json`), no row or Fraction made.

    A worker encodes the rows after every result: this is most of what it spends outside the core.
    """
    if not table.ranks:
        return msgspec.Raw(b"[]")
    n = len(table.ranks)
    shown: Iterable[msgspec.Struct]
    if codes:
        values = [map(_unit_json(den).__getitem__, column) for column, den in table.shown]
        shown = starmap(_tiebreaks_out(codes), zip(*values, strict=True))
    else:
        shown = repeat(_NO_TIEBREAKS, n)
    den = table.denominator
    out = list(
        map(
            _RowOut,
            table.ranks,
            table.start_nos,
            table.names,
            map(_unit_json(den).__getitem__, table.points),
            shown,
            table.games,
            table.withdrawn,
            table.qualified,
            map(_unit_json(2 * den).__getitem__, table.lines),
            table.results,
        )
    )
    return msgspec.Raw(_encoder.encode(out))


class _UnitJSON(dict[int, msgspec.Raw]):
    """``units → the JSON of units / denominator`` as the encoder writes that float, each written once."""

    __slots__ = ("denominator",)

    def __init__(self, denominator: int) -> None:
        super().__init__()
        self.denominator = denominator

    def __missing__(self, units: int) -> msgspec.Raw:
        if len(self) >= _UNITS_HELD:
            self.clear()
        # units / denominator is the float of the reduced Fraction (int division is correctly rounded), the
        # value row_json writes
        raw = self[units] = msgspec.Raw(_encoder.encode(units / self.denominator))
        return raw


_UNIT_JSON: Final[dict[int, _UnitJSON]] = {}
_UNITS_HELD: Final = 4096  # numbers per denominator before the table starts again


def _unit_json(denominator: int) -> _UnitJSON:
    table = _UNIT_JSON.get(denominator)
    if table is None:
        table = _UNIT_JSON[denominator] = _UnitJSON(denominator)
    return table


@lru_cache(maxsize=256)
def _tiebreaks_out(codes: tuple[str, ...]) -> type[msgspec.Struct]:
    """A struct whose fields are ``codes`` in order, each the JSON of a number: it encodes as the row's
    ``"tiebreaks"`` object (``{code: value}`` in the codes' order), and is made per row in C, not as a dict."""
    names = [f"c{k}" for k in range(len(codes))]
    return msgspec.defstruct(
        "_TieBreaksOut", [(name, msgspec.Raw) for name in names], rename=dict(zip(names, codes, strict=True))
    )


_NO_TIEBREAKS: Final = _tiebreaks_out(())()


#: ``id(scoring) → (scoring, its JSON)``: a tournament's :attr:`Standings.scoring` is one tuple (made once per
#: scoring), so its floats are made once, not nine ``Fraction.__float__`` per update; the entry holds the tuple,
#: so the id is not reused while it is cached.
_SCORINGS: Final[dict[int, tuple[tuple[tuple[str, Fraction], ...], dict[str, float]]]] = {}


def _scoring_json(scoring: tuple[tuple[str, Fraction], ...]) -> dict[str, float]:
    """The ``"scoring"`` of a payload (a fresh dict each time: a payload is the caller's to change)."""
    hit = _SCORINGS.get(id(scoring))
    if hit is None or hit[0] is not scoring:
        if len(_SCORINGS) >= 256:
            _SCORINGS.clear()
        hit = _SCORINGS[id(scoring)] = (scoring, {name: float(points) for name, points in scoring})
    return dict(hit[1])


#: ``id(scoring) → (scoring, its JSON)``, as :data:`_SCORINGS` for :func:`encoding_payload`.
_SCORINGS_RAW: Final[dict[int, tuple[tuple[tuple[str, Fraction], ...], msgspec.Raw]]] = {}


def _scoring_raw(scoring: tuple[tuple[str, Fraction], ...]) -> msgspec.Raw:
    """The JSON of :func:`_scoring_json`'s dict, written once per scoring (nine floats an update otherwise)."""
    hit = _SCORINGS_RAW.get(id(scoring))
    if hit is None or hit[0] is not scoring:
        if len(_SCORINGS_RAW) >= 256:
            _SCORINGS_RAW.clear()
        hit = _SCORINGS_RAW[id(scoring)] = (scoring, msgspec.Raw(_encoder.encode(_scoring_json(scoring))))
    return hit[1]


# -- stakes, chances and cues (subscribers with ``"stakes": true``) ---------------------------


class StakeJSON(TypedDict):
    """One player's state on one line changes with this outcome; ``text`` says it for people."""

    start_no: int
    places: int
    line: str
    before: LineState
    after: LineState
    text: str
    said: SaidJSON


class NormStakeJSON(TypedDict):
    """This outcome decides a player's title norm (B.01): ``after`` it is ``secured`` or ``out``."""

    start_no: int
    title: str
    after: Literal["secured", "out"]
    text: str
    said: SaidJSON


class OutcomeStakesJSON(TypedDict):
    result: GameResult
    stakes: list[StakeJSON]
    #: the title norms this outcome decides (:mod:`tracker.core.worth.live`); absent when it decides none
    norms: NotRequired[list[NormStakeJSON]]
    #: with prizes declared, a game of the round being played: its players' money with this outcome
    money: NotRequired[list[MoneyStakeJSON]]


class TeamLineStakeJSON(TypedDict):
    """After this result the team (its number) has clinched, or can no longer reach, the first ``places``."""

    team: int
    places: int
    after: Literal["clinched", "eliminated"]
    text: str
    said: SaidJSON


class TeamRangeJSON(TypedDict):
    team: int
    rank_best: int
    rank_worst: int


class BoardOutcomeJSON(TypedDict):
    """One result of a pending board: the team lines it decides and the rank ranges it changes."""

    result: GameResult
    exact: bool
    stakes: list[TeamLineStakeJSON]
    ranges: list[TeamRangeJSON]


class BoardDecidesJSON(TypedDict):
    """A pending board of a team event's last round (``white_team``/``black_team``: the teams by number)."""

    round: int
    board: int
    white: int
    black: int
    white_team: int
    black_team: int
    outcomes: list[BoardOutcomeJSON]


def team_games_json(found: tuple[BoardDecides, ...]) -> list[BoardDecidesJSON]:
    """The ``team_games`` of a team event's stakes message (:mod:`tracker.core.teams.stakes`)."""
    return [
        {
            "round": d.game.round,
            "board": d.game.board,
            "white": d.game.white,
            "black": d.game.black,
            "white_team": d.game.white_team,
            "black_team": d.game.black_team,
            "outcomes": [
                {
                    "result": result,
                    "exact": exact,
                    "stakes": [
                        {
                            "team": x.team,
                            "places": x.places,
                            "after": x.after,
                            "text": x.text,
                            "said": said_json(x.said),
                        }
                        for x in stakes
                    ],
                    "ranges": [
                        {"team": team, "rank_best": best, "rank_worst": worst}
                        for team, (best, worst) in sorted(ranges.items())
                    ],
                }
                for result, exact, stakes, ranges in d.outcomes
            ],
        }
        for d in found
    ]


class NormStateJSON(TypedDict):
    """A norm still in play: ``secured``, or ``possible`` with the points ``needed`` over the norm games
    (``scored`` so far, ``remaining`` games to play)."""

    title: str
    status: Literal["secured", "possible"]
    needed: float | None
    scored: float
    remaining: int
    text: str
    said: SaidJSON


class PlayerWorthJSON(TypedDict):
    """What results are worth to one player so far (B.02, B.01): the rating change over the rated games
    (``null``: unrated), the performance (TPR; ``null`` without a rated game), the K used and the norms in play;
    with prizes declared, the money: ``prize`` once paid, else ``prize_min``/``prize_max`` (``prize_exact``
    false: the extremes found within the search's budget)."""

    start_no: int
    rating_change: float | None
    performance: int | None
    k: int | None
    norms: list[NormStateJSON]
    prize: NotRequired[float]
    prize_min: NotRequired[float]
    prize_max: NotRequired[float]
    prize_exact: NotRequired[bool]
    #: with prize categories declared: the list paying ``prize`` (or ``prize_min``/``prize_max``): ``place``,
    #: a category's name, ``null`` for no money
    prize_from: NotRequired[str | None]
    prize_min_from: NotRequired[str | None]
    prize_max_from: NotRequired[str | None]


class MoneyStakeJSON(TypedDict):
    """With this outcome, one of the game's players is sure of ``least`` and can still win ``most``."""

    start_no: int
    least: float
    most: float
    exact: bool


def worth_json(w: LiveWorth) -> list[PlayerWorthJSON]:
    """The ``worth`` of a stakes message: every player, in start-list order."""
    rows = [_player_worth_json(p) for p in w.players]
    for row, p in zip(rows, w.players, strict=True):
        m = p.money
        if m is None:
            continue
        if m.final:
            row["prize"] = _number(m.least)
            if m.categories:
                row["prize_from"] = m.least_from
        else:
            row["prize_min"], row["prize_max"], row["prize_exact"] = _number(m.least), _number(m.most), m.exact
            if m.categories:
                row["prize_min_from"], row["prize_max_from"] = m.least_from, m.most_from
    return rows


def money_stakes_json(stakes: tuple[MoneyStake, ...]) -> list[MoneyStakeJSON]:
    """The ``money`` of one outcome of a pending game."""
    return [
        {"start_no": x.start_no, "least": _number(x.least), "most": _number(x.most), "exact": x.exact} for x in stakes
    ]


def _player_worth_json(p: PlayerWorth) -> PlayerWorthJSON:
    return {
        "start_no": p.rating.start_no,
        "rating_change": shown_change(p.rating),
        "performance": p.rating.performance,
        "k": p.rating.k,
        "norms": [
            {
                "title": n.title,
                "status": "secured" if n.status == "secured" else "possible",
                "needed": None if n.needed is None else float(n.needed),
                "scored": float(n.scored),
                "remaining": n.remaining,
                "text": text,
                "said": said_json(said),
            }
            for n, said, text in zip(p.norms, p.said, p.texts, strict=True)
        ],
    }


def norm_stakes_json(stakes: tuple[NormStake, ...]) -> list[NormStakeJSON]:
    """The ``norms`` of one outcome of a pending game."""
    return [
        {"start_no": s.start_no, "title": s.title, "after": s.after, "text": s.text, "said": said_json(s.said)}
        for s in stakes
    ]


class GameStakesJSON(TypedDict):
    """A pending game; ``exact`` false: the stakes listed are proven, and there may be more. ``board``: its
    board in the round (0 when the tournament was opened without a schedule)."""

    round: int | None
    board: int
    white: int
    black: int
    outcomes: list[OutcomeStakesJSON]
    exact: bool


class LineStateJSON(TypedDict):
    places: int
    name: str
    state: LineState


class PlayerLinesJSON(TypedDict):
    start_no: int
    name: str
    lines: list[LineStateJSON]


class LineChanceJSON(TypedDict):
    places: int
    name: str
    chance: float


class PlayerChancesJSON(TypedDict):
    """Estimated chances (0–1): the title, each line, the play-off (null without one), each place."""

    start_no: int
    first: float
    lines: list[LineChanceJSON]
    playoff: float | None
    positions: list[float]


class ChancesJSON(TypedDict):
    """Chances from ratings: an estimate (``estimate`` is always true), never an exact answer.

    ``model`` names how it was made (Elo expectation with a draw model), ``runs`` simulated completions
    of the tournament from ``seed``.
    """

    estimate: Literal[True]
    model: str
    runs: int
    seed: int
    draw_rate: float
    players: list[PlayerChancesJSON]


def chances_json(c: Chances, model: str | None = None) -> ChancesJSON:
    """Simulated chances as every message carries them: an estimate, with how it was made (``model``)."""
    return {
        "estimate": True,
        "model": model or f"Elo expectation, draw rate {c.draw_rate:g} between equals, {c.runs} simulated runs",
        "runs": c.runs,
        "seed": c.seed,
        "draw_rate": c.draw_rate,
        "players": [
            {
                "start_no": p.start_no,
                "first": p.first,
                "lines": [
                    {"places": places, "name": name, "chance": chance}
                    for (places, name), chance in zip(c.lines, p.lines, strict=True)
                ],
                "playoff": p.playoff,
                "positions": list(p.positions),
            }
            for p in c.players
        ],
    }


def encode(obj: object) -> bytes:
    """JSON bytes of a plain value (decimals as numbers)."""
    return _encoder.encode(obj)
