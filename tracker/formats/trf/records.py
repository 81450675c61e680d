"""The records that are not player lines: what tracker reads from them, and writes into them.

``012`` name, ``XXR``/``142`` rounds, ``162`` (and JaVaFo's ``XXS``) scoring,
``202``/``212`` tie-breaks are interpreted; ``062`` (the player count) is
dropped because the export writes its own; every other line — ``022`` city,
``042`` start date (which also says the C.07 edition), ``092``/``192``
tournament type (also read as a single/double hint), ``102`` arbiter, ``###``
comments … — is kept verbatim in ``TournamentOpened.records`` so that the
export writes it back.

tracker's own records (``XX`` records, as JaVaFo's; other readers skip them):

``XXT start_no v1 v2 …``
    published tie-break values, in the order of the file's 202/212 codes
    without ``PTS``, for ``tracker check`` (read, not exported);
``XXN round start_no …``
    in that round these players have nothing recorded yet: their blank
    block, or the blank result of their pairing, is a game or a round still
    to come, not a zero bye or an unplayed game (what a blank says in TRF);
    without it a live export could not say "not entered yet" for a round
    before the last round with results (``--final`` ignores it);
``XXW start_no round reason``
    the player withdrew; ``round`` is the first round they no longer play
    (``0``: not given), the reason the rest of the line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Final

from tracker.core.audit import Official
from tracker.core.errors import EventRejected, FormatError
from tracker.core.events import DEFAULT_TIEBREAKS, Format, Rules, Scoring, TournamentOpened
from tracker.core.teams.setup import DEFAULT_TEAM_TIEBREAKS, MatchScoring, Team
from tracker.core.teams.tiebreaks import is_team_code
from tracker.core.tiebreaks import parse_code_list, parse_tiebreak, parse_tiebreaks
from tracker.formats.trf.columns import MAX_ROUNDS, PlayerLine, number, one_line, points_text

MAX_RECORDS: Final = 100
MAX_RECORD_LENGTH: Final = 400
_MAX_CODES: Final = 16
#: players an ``XXN`` record lists per line (a long list is split over several lines)
_PENDING_PER_LINE: Final = 20
_SCORING_162: Final = re.compile(r"\s*([A-Za-z])\s*(-?[0-9]{1,4}(?:\.[0-9]{1,3})?)")
_SCORING_XXS: Final = re.compile(r"\s*([A-Za-z]{1,3})=(-?[0-9]{1,4}(?:\.[0-9]{1,3})?)")
#: XXS code (JaVaFo) → the Scoring fields it sets.
_XXS_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "W": ("win",),
    "WW": ("win",),
    "BW": ("win",),
    "D": ("draw",),
    "WD": ("draw",),
    "BD": ("draw",),
    "L": ("loss",),
    "WL": ("loss",),
    "BL": ("loss",),
    "ZPB": ("zero_bye",),
    "HPB": ("half_bye",),
    "FPB": ("full_bye",),
    "PAB": ("pab",),
    "FW": ("forfeit_win",),
    "FL": ("forfeit_loss",),
}
#: 162 code (TRF26) → the Scoring fields it sets.  ``W`` also covers forfeit
#: wins and full byes and ``D`` half byes (they stay "as a win/draw");
#: ``X`` (unknown result) has no counterpart in tracker and is ignored.
_162_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "W": ("win",),
    "D": ("draw",),
    "L": ("loss",),
    "A": ("zero_bye", "forfeit_loss"),
    "P": ("pab",),
    "X": (),
}
_DATE: Final = re.compile(r"(\d{4})[/.-](\d{1,2})[/.-](\d{1,2})")


@dataclass(frozen=True, slots=True)
class Withdrawal:
    """An ``XXW`` record: who withdrew, from which round (``None``: not given), why; ``line`` for messages."""

    line: int
    start_no: int
    round: int | None
    reason: str


@dataclass(slots=True)
class Header:
    """What the non-player records say; ``records`` are the lines kept verbatim."""

    name: str | None = None
    rounds: int = 0
    scoring: dict[str, Decimal] = field(default_factory=dict)
    scoring_line: int = 0
    tiebreaks_202: tuple[int, tuple[str, ...]] | None = None
    tiebreaks_212: tuple[int, tuple[str, ...]] | None = None
    format_hint: Format | None = None
    records: list[str] = field(default_factory=list)
    #: ``XXT start_no value …`` lines: (line number, start rank, values as written)
    values: list[tuple[int, int, tuple[str, ...]]] = field(default_factory=list)
    #: ``XXN``: round → the players with nothing recorded yet in it (and the line that said so)
    pending: dict[int, dict[int, int]] = field(default_factory=dict)
    withdrawals: list[Withdrawal] = field(default_factory=list)


def header_record(header: Header, code: str, line: str, line_no: int, path: str) -> None:
    """Read one record that is not a ``001`` line into ``header``; raises :class:`FormatError` for a bad one."""
    value = line[4:].strip()
    if code == "012":
        if header.name is not None:
            raise FormatError(path, line_no, "a second tournament name (012)")
        if len(value) > 200:
            raise FormatError(path, line_no, "the tournament name (012) is longer than 200 characters")
        header.name = value
    elif code == "062":
        pass  # the player count: the export writes its own
    elif code in ("XXR", "142"):
        rounds = number(value, path, line_no, f"the number of rounds ({code})")
        if not 1 <= rounds <= MAX_ROUNDS:
            raise FormatError(path, line_no, f"the number of rounds ({code}) must be 1 to {MAX_ROUNDS}, not {rounds}")
        header.rounds = max(header.rounds, rounds)
    elif code == "162":
        _scoring(header, value, _SCORING_162, _162_FIELDS, line_no, path, "162")
    elif code == "XXS":
        _scoring(header, value, _SCORING_XXS, _XXS_FIELDS, line_no, path, "XXS")
    elif code == "XXT":  # tracker's record: published tie-break values, for ``tracker check`` (not exported)
        parts = value.split()
        if not parts:
            raise FormatError(path, line_no, "XXT needs a starting rank and the tie-break values")
        header.values.append((line_no, number(parts[0], path, line_no, "the starting rank (XXT)"), tuple(parts[1:])))
    elif code == "XXN":
        _pending(header, value, line_no, path)
    elif code == "XXW":
        parts = value.split(maxsplit=2)
        if len(parts) < 2:
            raise FormatError(path, line_no, "XXW needs a starting rank and a round (0: not given)")
        start_no = number(parts[0], path, line_no, "the starting rank (XXW)")
        round_ = number(parts[1], path, line_no, "the round (XXW)")
        reason = parts[2] if len(parts) > 2 else ""
        header.withdrawals.append(Withdrawal(line_no, start_no, round_ or None, reason[:200]))
    elif code in ("202", "212"):
        codes = parse_code_list(value)
        if team_order(codes):  # a team event's order (FIDE TEC codes): kept for the team setup and the export
            keep(header, line, line_no, path)
            return
        if code == "202":
            header.tiebreaks_202 = (line_no, codes)
        else:
            header.tiebreaks_212 = (line_no, codes)
    else:
        if code in ("013", "310", "352", "362"):
            check_team_record(code, line, line_no, path)
        if code in ("092", "192"):
            hint = format_hint(line)
            if hint is not None:
                header.format_hint = hint
        keep(header, line, line_no, path)


def team_order(codes: tuple[str, ...]) -> bool:
    """Whether a 202/212 list is a team order: it names a code only the team table reads (``MPTS``, ``EDE`` …)."""
    for code in codes:
        if not is_team_code(code):
            continue
        try:
            parse_tiebreak(code)
        except EventRejected:
            return True
    return False


def keep(header: Header, line: str, line_no: int, path: str) -> None:
    """Keep a record verbatim (written back by the export); raises :class:`FormatError` past the limits."""
    if len(line) > MAX_RECORD_LENGTH:
        raise FormatError(path, line_no, f"a record longer than {MAX_RECORD_LENGTH} characters")
    if len(header.records) >= MAX_RECORDS:
        raise FormatError(path, line_no, f"more than {MAX_RECORDS} header records and comments")
    header.records.append(line)


def _pending(header: Header, value: str, line_no: int, path: str) -> None:
    parts = value.split()
    if len(parts) < 2:
        raise FormatError(path, line_no, "XXN needs a round and the starting ranks with nothing recorded in it")
    round_ = number(parts[0], path, line_no, "the round (XXN)")
    players = header.pending.setdefault(round_, {})
    for part in parts[1:]:
        players.setdefault(number(part, path, line_no, "a starting rank (XXN)"), line_no)


def pending_records(round_: int, start_nos: list[int]) -> list[str]:
    """The ``XXN`` lines saying that ``start_nos`` have nothing recorded yet in ``round_``."""
    return [
        f"XXN {round_} " + " ".join(str(s) for s in start_nos[k : k + _PENDING_PER_LINE])
        for k in range(0, len(start_nos), _PENDING_PER_LINE)
    ]


def withdrawal_record(start_no: int, round_: int | None, reason: str) -> str:
    """The ``XXW`` line of a withdrawal."""
    return f"XXW {start_no} {round_ or 0} {one_line(reason)}".rstrip()


def format_hint(line: str) -> Format | None:
    """Single or double from a ``092`` (free text) or ``192`` (TRF26 code) record, if it says."""
    text = line[4:].strip().upper()
    if "DOUBLE" in text or text.endswith("_G2"):
        return "double"
    if line.startswith("192") and "ROUNDROBIN" in text and not re.search(r"_G[0-9]+$", text):
        return "single"
    return None


def _scoring(
    header: Header,
    value: str,
    token: re.Pattern[str],
    fields: dict[str, tuple[str, ...]],
    line_no: int,
    path: str,
    code: str,
) -> None:
    position = 0
    found: dict[str, Decimal] = {}
    while position < len(value):
        match = token.match(value, position)
        if match is None:
            raise FormatError(path, line_no, f"cannot read the scoring ({code}) at {value[position:][:12]!r}")
        name, points = match.group(1).upper(), Decimal(match.group(2))
        if name not in fields:
            raise FormatError(path, line_no, f"unknown scoring code {name!r} in {code}")
        for attribute in fields[name]:
            if attribute in found and found[attribute] != points:
                raise FormatError(path, line_no, f"{code} gives {attribute.replace('_', ' ')} two values")
            found[attribute] = points
        position = match.end()
    header.scoring.update(found)
    header.scoring_line = line_no


def scoring_of(header: Header, path: str) -> Scoring:
    """The scoring the ``162``/``XXS`` records give (1-½-0 without them); raises :class:`FormatError` for a win ≤ 0."""
    values = header.scoring
    if not values:
        return Scoring()
    default = Scoring()

    def value(name: str, fallback: Decimal) -> Decimal:
        given = values.get(name)
        return fallback if given is None else given

    scoring = Scoring(
        win=value("win", default.win),
        draw=value("draw", default.draw),
        loss=value("loss", default.loss),
        forfeit_win=values.get("forfeit_win"),
        forfeit_loss=value("forfeit_loss", default.forfeit_loss),
        full_bye=values.get("full_bye"),
        half_bye=values.get("half_bye"),
        zero_bye=value("zero_bye", default.zero_bye),
        pab=values.get("pab"),
    )
    if scoring.win <= 0:
        raise FormatError(path, header.scoring_line, "a win must be worth more than 0 points")
    return scoring


def scoring_records(s: Scoring) -> list[str]:
    """The ``162`` record of a scoring other than 1-½-0, and ``XXS`` for what 162 cannot say."""
    if s == Scoring():
        return []
    parts = [("W", s.win), ("D", s.draw), ("L", s.loss)]
    if s.forfeit_loss == s.zero_bye != 0:
        parts.append(("A", s.zero_bye))
    if s.pab is not None:
        parts.append(("P", s.pab))
    records = ["162  " + "    ".join(f"{code}{points_text(Fraction(v)):>4}" for code, v in parts)]
    extra = [("FW", s.forfeit_win), ("FPB", s.full_bye), ("HPB", s.half_bye)]
    if s.forfeit_loss != s.zero_bye:
        extra += [("ZPB", s.zero_bye), ("FL", s.forfeit_loss)]
    given = [f"{code}={points_text(Fraction(v))}" for code, v in extra if v is not None]
    if given:
        records.append("XXS " + " ".join(given))
    return records


def rules_of(records: list[str] | tuple[str, ...]) -> Rules:
    """The C.07 edition a file's ``042`` start date implies: ``2024`` before 1 March 2026, else ``2026``.

    The 2026 edition applies to events that start on or after 1 March 2026;
    the FIDE TEC tie-break server chooses the edition the same way.  A file
    without a readable start date is read under 2026 (tracker's default).
    """
    for record in records:
        if record.startswith("042"):
            match = _DATE.search(record[3:])
            if match:
                year, month, day = (int(part) for part in match.groups())
                return "2024" if (year, month, day) < (2026, 3, 1) else "2026"
    return "2026"


def tiebreaks_of(header: Header, path: str, rules: Rules) -> tuple[str, ...]:
    """212 when present (it defines the standings), else 202 with ``PTS`` first, else the default order."""
    chosen = header.tiebreaks_212 or header.tiebreaks_202
    if chosen is None:
        return DEFAULT_TIEBREAKS
    line_no, codes = chosen
    try:
        parsed = parse_tiebreaks(codes, rules)
    except EventRejected as exc:
        raise FormatError(path, line_no, exc.reason) from None
    if len(parsed) > _MAX_CODES:
        raise FormatError(path, line_no, f"more than {_MAX_CODES} tie-break codes")
    return tuple(tb.code for tb in parsed)


def official(header: Header, lines: list[PlayerLine], opened: TournamentOpened, path: str) -> tuple[Official, ...]:
    """The published figures: each line's rank column and its ``XXT`` values.

    ``XXT start_rank v1 v2 …`` (tracker's record; TRF has no column for
    tie-break values) lists the values in the order of the file's tie-breaks
    without ``PTS``; ``9.25``, ``2.5`` or ``2½``.  Raises :class:`FormatError`
    for a count that does not match, a value that is not a number or a
    starting rank that is not in the file.
    """
    codes = [code for code in opened.tiebreaks if code != "PTS"]
    values: dict[int, dict[str, Fraction]] = {}
    known = {pl.player.start_no for pl in lines}
    for line_no, start_no, texts in header.values:
        if start_no not in known:
            raise FormatError(path, line_no, f"XXT for starting rank {start_no}, which has no 001 line")
        if len(texts) != len(codes):
            raise FormatError(
                path, line_no, f"XXT has {len(texts)} values for the {len(codes)} tie-breaks {','.join(codes)}"
            )
        parsed: dict[str, Fraction] = {}
        for code, text in zip(codes, texts, strict=True):
            try:
                parsed[code] = Fraction(Decimal(text.replace("½", ".5") if text != "½" else "0.5"))
            except (ArithmeticError, ValueError):
                raise FormatError(path, line_no, f"the XXT value {text!r} for {code} is not a number") from None
        values[start_no] = parsed
    return tuple(
        Official(pl.player.start_no, pl.rank, values.get(pl.player.start_no, {}))
        for pl in lines
        if pl.rank is not None or pl.player.start_no in values
    )


# -- team records (013, 310, 352, 362; a 202/212 team order) ------------------------------------

_SCORING_362: Final = _SCORING_162
#: 362 code → the MatchScoring field it sets (``A``: a match lost unplayed and a zero team bye; ``X`` ignored)
_362_FIELDS: Final[dict[str, str]] = {"W": "win", "D": "draw", "L": "loss", "A": "unplayed", "P": "pab"}
_COLOURS: Final = re.compile(r"[WBwb]+")


@dataclass(frozen=True, slots=True)
class TeamRecords:
    """What a file's team records say: the teams (``310`` when present, else ``013``), ``352``, ``362``, the order."""

    teams: tuple[Team, ...]
    colours: str
    scoring: MatchScoring
    tiebreaks: tuple[str, ...]


def _team_players(line: str, first: int, line_no: int, path: str) -> tuple[int, ...]:
    """The start numbers every 5 columns from 0-based column ``first`` (a 4-column field each; blank or 0: none)."""
    players = []
    for at in range(first, len(line), 5):
        text = line[at : at + 4].strip()
        if not text:
            continue
        if not text.isdigit():
            raise FormatError(
                path, line_no, f"team record: {text!r} in columns {at + 1}-{at + 4} is not a start number"
            )
        if int(text):
            players.append(int(text))
    return tuple(players)


def team_records(records: Sequence[str], path: str) -> TeamRecords | None:
    """The team records among ``records`` (the lines a TRF keeps verbatim), or ``None`` for an individual event.

    ``013``: columns 5–36 the team's name, then its players' start numbers in board order every 5 columns
    (37–40, 42–45, …); the teams are numbered in file order.  ``310`` (TRF26; replaces ``013`` when
    present): columns 5–7 the team's number, 9–40 its name, the players from columns 74–77 on.  ``352``
    the first-named team's colour on each board (its length is the board count); ``362`` the match points
    (``W``, ``D``, ``L``, ``A``, ``P`` as in ``162``); a ``202``/``212`` naming team codes the team order
    (the later one wins, as for players).  Raises :class:`FormatError` for a record that does not read.
    """
    found = _TeamLines()
    for line in records:
        team_record(found, line[:3], line, 0, path)
    teams = found.teams_310 or found.teams_013
    if not teams:
        return None
    teams.sort(key=lambda team: team.number)
    seen: dict[int, int] = {}
    for team in teams:
        for player in team.players:
            other = seen.setdefault(player, team.number)
            if other != team.number:
                raise FormatError(path, 0, f"player {player} is in team {other} and in team {team.number}")
    s = found.scoring
    d = MatchScoring()
    scoring = MatchScoring(
        win=s.get("win", d.win),
        draw=s.get("draw", d.draw),
        loss=s.get("loss", d.loss),
        unplayed=s.get("unplayed", d.unplayed),
        pab=s.get("pab"),
    )
    return TeamRecords(tuple(teams), found.colours, scoring, found.order)


@dataclass(slots=True)
class _TeamLines:
    teams_013: list[Team] = field(default_factory=list)
    teams_310: list[Team] = field(default_factory=list)
    colours: str = ""
    scoring: dict[str, Fraction] = field(default_factory=dict)
    order: tuple[str, ...] = DEFAULT_TEAM_TIEBREAKS


def team_record(found: _TeamLines, code: str, line: str, line_no: int, path: str) -> None:
    """Read one team record into ``found`` (other records are skipped); raises :class:`FormatError`."""
    if code == "013":
        name = line[4:36].strip()
        found.teams_013.append(Team(len(found.teams_013) + 1, name, _team_players(line, 36, line_no, path)))
    elif code == "310":
        text = line[4:7].strip()
        if not text.isdigit():
            raise FormatError(path, line_no, f"310: the team number in columns 5-7 is {text!r}")
        found.teams_310.append(Team(int(text), line[8:40].strip(), _team_players(line, 73, line_no, path)))
    elif code == "352":
        colours = line[4:].strip()
        if not _COLOURS.fullmatch(colours):
            raise FormatError(path, line_no, f"352: the colour sequence {colours!r} is not made of W and B")
        found.colours = colours.upper()
    elif code == "362":
        _match_scoring(line[4:], found.scoring, line_no, path)
    elif code in ("202", "212"):
        codes = parse_code_list(line[4:].strip())
        if team_order(codes):
            found.order = codes


def check_team_record(code: str, line: str, line_no: int, path: str) -> None:
    """Raise :class:`FormatError` (with the file's line) for a team record that does not read."""
    team_record(_TeamLines(), code, line, line_no, path)


def _match_scoring(value: str, found: dict[str, Fraction], line_no: int, path: str) -> None:
    position = 0
    while position < len(value) and value[position:].strip():
        match = _SCORING_362.match(value, position)
        if match is None:
            raise FormatError(path, line_no, f"cannot read the match scoring (362) at {value[position:][:12]!r}")
        name = match.group(1).upper()
        if name not in _362_FIELDS and name != "X":
            raise FormatError(path, line_no, f"unknown match scoring code {name!r} in 362")
        if name in _362_FIELDS:
            found[_362_FIELDS[name]] = Fraction(Decimal(match.group(2)))
        position = match.end()
