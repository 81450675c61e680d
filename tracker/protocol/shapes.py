"""The JSON shapes of what tracker computes: standings rows, projections, stakes and chances.

One function per value turns a core result into the ``TypedDict`` it is
sent as (``tracker standings --format json``, the HTTP API and every
websocket message share them); the messages that carry these shapes are in
:mod:`tracker.protocol.messages`.  Numbers are JSON numbers: the core's exact
fractions are halves and quarters (exact in binary) or short decimals.
:func:`encode` is the one encoder (decimals as numbers).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any, Final, Literal, NotRequired, TypedDict

import msgspec

from tracker.core.events import GameResult
from tracker.core.phrases import Said
from tracker.core.projection import LineStatus, Projection, Scenario, Status
from tracker.core.projection.chances import Chances
from tracker.core.projection.stakes import LineState
from tracker.core.standings import Row, Standings
from tracker.core.teams.standings import TeamStandings
from tracker.core.tiebreaks import parse_tiebreak, rule_of
from tracker.core.worth.prizes import Money
from tracker.core.worth.rating import RatingChange, one_decimal

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


def rating_json(row: WorthRowJSON, c: RatingChange) -> None:
    """Add ``c`` (the row's player's rating change so far, B.02) to ``row``: the change to one decimal, the
    performance (TPR), the K used and how it was chosen; ``null`` change for an unrated player."""
    row["rating_change"] = None if c.k is None else one_decimal(c.change)
    row["performance"] = c.performance
    row["k"] = c.k
    row["k_from"] = c.k_from


def prize_json(row: WorthRowJSON, money: Money) -> None:
    """Add ``money`` (the row's player's prize, :mod:`tracker.core.worth.prizes`) to ``row``: ``prize`` once the
    standings are final, else ``prize_min``/``prize_max`` with a scenario each and whether both are exact."""
    if money.final:
        row["prize"] = _number(money.least)
        return
    row["prize_min"] = _number(money.least)
    row["prize_max"] = _number(money.most)
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
    event's carries its ``"teams"`` rows last."""
    payload: StandingsPayload = {
        **standings_json(s),
        "rounds": s.rounds,
        "games_played": sum(row.games for row in s.rows) // 2,
        "codes": list(s.codes),
        "scoring": _scoring_json(s.scoring),
    }
    if s.teams is not None:
        payload["teams"] = team_rows_json(s.teams)
    return payload


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


class OutcomeStakesJSON(TypedDict):
    result: GameResult
    stakes: list[StakeJSON]


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
