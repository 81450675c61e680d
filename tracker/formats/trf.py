"""TRF16 and TRF26 tournament report files, in and out.

How this works
--------------

:func:`parse_trf` reads a file in three steps.

1. Every line is classified by its three-character record code.  ``001``
   player lines are cut by column (FIDE C.04 Annex 2 / TRF26): start rank
   5–8, sex 10, title 11–13, name 15–47, rating 49–52, federation 54–56,
   FIDE id 58–68, birth date 70–79, points 81–84, rank 86–89, then one block
   of ten columns per round from column 92 (opponent 92–95, colour 97,
   result 99).  Columns are characters; a line with non-ASCII characters
   that only parses with columns counted in UTF-8 bytes (a program that pads
   names to 33 bytes) is read that way, and a note says so.  The records tracker understands are interpreted: ``012``
   name, ``XXR``/``142`` rounds, ``162`` (and JaVaFo's ``XXS``) scoring,
   ``202``/``212`` tie-breaks; ``062`` (player count) is dropped because the
   export writes its own.  Every other line — ``022`` city, ``092``/``192``
   tournament type (also read as a single/double hint), ``102`` arbiter,
   ``###`` comments … — is kept verbatim in ``TournamentOpened.records`` so
   that :func:`export_trf` writes it back.
2. The round blocks are paired up.  A game is on both players' lines and the
   two must agree: the opponents point at each other, the colours are
   opposite, and the two codes make one result.  Each game becomes one
   :class:`ResultRecorded` seen from White's line; a block without an
   opponent becomes a :class:`ByeRecorded`.
3. The opening event and the events are checked against the wire schema and
   folded through the core, so a file that reads is a file the tracker
   accepts; last, each line's points column is compared with the folded
   score.

Result codes (TRF16 = TRF26; letters case-insensitive)
------------------------------------------------------

==========================  ==========================================
White's / Black's codes     event
==========================  ==========================================
``1 0``, ``= =``, ``0 1``   ``1-0``, ``1/2-1/2``, ``0-1``
``W L``, ``D D``, ``L W``   the same with ``short=True`` (< 1 move)
``+ -``, ``- +``            forfeit ``+-`` / ``-+`` (opponent kept)
``- -``                     double forfeit ``--`` (a loss for both)
both blank                  see below
==========================  ==========================================

A game both lines leave blank is ambiguous: the specification (blank =
``Z``) and the FIDE TEC tie-break server read it as an unplayed game worth 0
— a withdrawal left in the file — while tracker's own export writes it for
games still to be played.  So: before the last round with results (a
game's result; byes are known as soon as a round is paired) it is an
unplayed game (a zero bye for each player: 0 points, not a game for
Koya, SB or direct encounter, which gives the server's values); in the last
round with results, and in later rounds that only list pairings, it is a
game still to come (no event), unless ``final=True`` (the event is over).
The :class:`TournamentFile`'s ``notes`` say which reading was used.

With opponent ``0000`` (or four blanks) the block is a bye: ``H`` half,
``F`` full, ``U`` pairing-allocated, ``Z``, ``-`` or blank zero.  A bye
written with a game code is read by its points: ``1``/``W``/``+`` as a full
bye, ``=``/``D`` as a half bye, ``0``/``L`` as a zero bye.  A round with
nothing at all for a player (a blank block, or a line that ends earlier),
up to the last round anyone has a block for, is a zero bye, as the
specification says for a blank code.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import Final

from tracker.core.audit import Official
from tracker.core.codes import RESULT_OF_CODES
from tracker.core.crosstable import Tournament
from tracker.core.errors import EventRejected, FormatError
from tracker.core.events import (
    DEFAULT_TIEBREAKS,
    ByeKind,
    ByeRecorded,
    Event,
    Format,
    Player,
    ResultRecorded,
    Rules,
    Scoring,
    TournamentOpened,
)
from tracker.core.standings import standings
from tracker.core.tiebreaks import parse_code_list, parse_tiebreaks
from tracker.formats.base import (
    TournamentFile,
    bye_id,
    check_characters,
    checked_file,
    file_stem,
    game_id,
    tournament_id_for,
)

#: Code of a block without an opponent → the bye it records.
_BYE_KINDS: Final[dict[str, ByeKind]] = {
    "H": "half",
    "F": "full",
    "U": "pab",
    "Z": "zero",
    "-": "zero",
    " ": "zero",
    "1": "full",
    "W": "full",
    "+": "full",
    "=": "half",
    "D": "half",
    "0": "zero",
    "L": "zero",
}
_BYE_ONLY_CODES: Final = frozenset("HFUZ")
_CODES: Final = frozenset("10=WDL+-HFUZ ")
_COLOURS: Final = frozenset("wb- ")
_OPPOSITE: Final = {"w": "b", "b": "w"}
_FIRST_BLOCK: Final = 91  # 0-based index of column 92, where round 1 starts
_BLOCK: Final = 10
_MAX_ROUNDS: Final = 999
_MAX_PLAYERS: Final = 500
_MAX_RECORDS: Final = 100
_MAX_RECORD_LENGTH: Final = 400
_MAX_CODES: Final = 16
_RECORD_CODE: Final = re.compile(r"[0-9A-Z]{3}")
_DIGITS: Final = re.compile(r"[0-9]+")
_OPPONENT: Final = re.compile(r" *[0-9]+")
_POINTS: Final = re.compile(r"-?[0-9]{1,4}(?:\.[0-9]{1,3})?")
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


@dataclass(frozen=True, slots=True)
class _Block:
    """One round of a 001 line: opponent (0 = none), colour ``w``/``b``/``-``, upper-case code."""

    opponent: int
    colour: str
    code: str

    def describe(self) -> str:
        if self.opponent == 0:
            return f"no opponent (code {self.code.strip() or 'blank'})"
        return f"opponent {self.opponent}, colour {self.colour}, code {self.code.strip() or 'blank'}"


@dataclass(frozen=True, slots=True)
class _PlayerLine:
    line: int
    player: Player
    points: Fraction | None
    points_text: str
    blocks: tuple[_Block | None, ...]
    rank: int | None = None

    def block(self, round_: int) -> _Block | None:
        return self.blocks[round_ - 1] if round_ <= len(self.blocks) else None


@dataclass(slots=True)
class _Header:
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


# -- reading ---------------------------------------------------------------------------------


def parse_trf(
    text: str, path: str, tournament_id: str | None = None, *, final: bool = False, rules: Rules | None = None
) -> TournamentFile:
    """Read a TRF16 or TRF26 file's text into the tournament's opening event and its events.

    Returns a :class:`TournamentFile` whose opening event has every player
    (by start rank), the format (``192``/``092`` when they say, else double
    when the rounds reach 2 × (players − 1)), the rounds (the largest of
    ``XXR``/``142``, the last round present and what the round robin needs),
    the scoring (``162``, then ``XXS``), the tie-breaks (``212``, else
    ``202`` with ``PTS`` first, else the default order) and the records kept
    for export; then one event per game (White's view) and per bye, round by
    round: games by White's start rank, then byes by start rank.  Event ids
    are ``{id}/r{round}/{white}-{black}`` and ``{id}/r{round}/bye/{player}``.

    The tournament id is ``tournament_id``, else a slug of the ``012`` name,
    else of the file name; ``path`` is used for that and for messages only.
    ``final`` says the event is over: a paired game with a blank result is
    then unplayed in every round, not only before the last round with
    results (see the module docstring); ``notes`` say which reading was used.
    ``rules`` is the C.07 edition; without it the ``042`` start date says
    (before 1 March 2026: ``2024``, as the FIDE TEC server reads it), and
    without a readable date ``2026``.  TRF26 has no record for the edition.

    Raises :class:`FormatError` (path, line, problem) for anything that is
    not a consistent round robin: binary junk, no player lines, a field that
    is not a number or is out of range, a misaligned round block, an unknown
    result code, an opponent that is not in the file, two lines that do not
    agree about a game, a points column that differs from the results, or
    any event the core would reject (a pair meeting too often, a player
    paired twice in a round).  Nothing partial is returned.
    """
    check_characters(text, path)
    text = text.removeprefix("\ufeff")
    if not text or text.isspace():  # not text.strip(): that would copy a 50 MB file once more
        raise FormatError(path, 0, "empty file")
    header = _Header()
    players: list[_PlayerLine] = []
    seen: dict[int, int] = {}  # start rank -> line: a repeated line is refused where it is, not after the file
    byte_aligned: list[int] = []  # lines that parse only with columns counted in UTF-8 bytes
    char_aligned: dict[int, tuple[str, int]] = {}  # non-ASCII lines read by characters -> (line, index)
    for number, raw in enumerate(_lines(text), start=1):
        line = raw.rstrip()
        if not line:
            continue
        if line.startswith("###"):
            _keep(header, line, number, path)
            continue
        code = line[:3]
        if not _RECORD_CODE.fullmatch(code) or (len(line) > 3 and line[3] != " "):
            raise FormatError(path, number, f"not a TRF record (a record starts with a code like 001): {line[:20]!r}")
        if code == "001":
            pl, by_bytes = _player_line_aligned(line, number, path)
            if by_bytes:
                byte_aligned.append(number)
            elif not line.isascii():
                char_aligned[number] = (line, len(players))
            other = seen.setdefault(pl.player.start_no, number)
            if other != number:
                raise FormatError(path, number, f"starting rank {pl.player.start_no} is already used on line {other}")
            if len(players) == _MAX_PLAYERS:
                raise FormatError(path, number, f"more than {_MAX_PLAYERS} players")
            players.append(pl)
        else:
            _header_record(header, code, line, number, path)
    notes: tuple[str, ...] = ()
    if byte_aligned:
        # the program counts columns in bytes: lines that read both ways are read its way too
        for number, (line, k) in char_aligned.items():
            with contextlib.suppress(FormatError):
                players[k] = _player_line(line.encode("utf-8").decode("latin-1"), number, path, by_bytes=True)
                byte_aligned.append(number)
        numbers = sorted(byte_aligned)
        shown = ", ".join(map(str, numbers[:10])) + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")
        notes = (
            f"line{'s' if len(numbers) > 1 else ''} {shown}: the columns are aligned by UTF-8 bytes, not characters "
            "(a name with accents is padded with fewer spaces): read that way",
        )
    return _tournament_file(header, players, path, tournament_id, final, notes, rules)


def _player_line_aligned(line: str, number: int, path: str) -> tuple[_PlayerLine, bool]:
    """A 001 line read by character columns, else — when only that parses — by UTF-8 byte columns.

    TRF counts columns in characters; some programs pad UTF-8 names to 33
    *bytes*, so every column after an accented name sits one character
    early.  Returns the line and whether it was read by bytes; raises the
    character reading's :class:`FormatError` when neither reading parses.
    """
    try:
        return _player_line(line, number, path), False
    except FormatError:
        if line.isascii():
            raise
        try:
            return _player_line(line.encode("utf-8").decode("latin-1"), number, path, by_bytes=True), True
        except FormatError:
            pass
        raise


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` one by one (a 50 MB file is not split into a list before its line 3 is refused)."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _header_record(header: _Header, code: str, line: str, number: int, path: str) -> None:
    value = line[4:].strip()
    if code == "012":
        if header.name is not None:
            raise FormatError(path, number, "a second tournament name (012)")
        if len(value) > 200:
            raise FormatError(path, number, "the tournament name (012) is longer than 200 characters")
        header.name = value
    elif code == "062":
        pass  # the player count: the export writes its own
    elif code in ("XXR", "142"):
        rounds = _number(value, path, number, f"the number of rounds ({code})")
        if not 1 <= rounds <= _MAX_ROUNDS:
            raise FormatError(path, number, f"the number of rounds ({code}) must be 1 to {_MAX_ROUNDS}, not {rounds}")
        header.rounds = max(header.rounds, rounds)
    elif code == "162":
        _scoring(header, value, _SCORING_162, _162_FIELDS, number, path, "162")
    elif code == "XXS":
        _scoring(header, value, _SCORING_XXS, _XXS_FIELDS, number, path, "XXS")
    elif code == "XXT":  # tracker's record: published tie-break values, for ``tracker check`` (not exported)
        parts = value.split()
        if not parts:
            raise FormatError(path, number, "XXT needs a starting rank and the tie-break values")
        header.values.append((number, _number(parts[0], path, number, "the starting rank (XXT)"), tuple(parts[1:])))
    elif code in ("202", "212"):
        codes = parse_code_list(value)
        if code == "202":
            header.tiebreaks_202 = (number, codes)
        else:
            header.tiebreaks_212 = (number, codes)
    else:
        if code in ("092", "192"):
            hint = _format_hint(line)
            if hint is not None:
                header.format_hint = hint
        _keep(header, line, number, path)


def _keep(header: _Header, line: str, number: int, path: str) -> None:
    if len(line) > _MAX_RECORD_LENGTH:
        raise FormatError(path, number, f"a record longer than {_MAX_RECORD_LENGTH} characters")
    if len(header.records) >= _MAX_RECORDS:
        raise FormatError(path, number, f"more than {_MAX_RECORDS} header records and comments")
    header.records.append(line)


def _format_hint(line: str) -> Format | None:
    """Single or double from a ``092`` (free text) or ``192`` (TRF26 code) record, if it says."""
    text = line[4:].strip().upper()
    if "DOUBLE" in text or text.endswith("_G2"):
        return "double"
    if line.startswith("192") and "ROUNDROBIN" in text and not re.search(r"_G[0-9]+$", text):
        return "single"
    return None


def _scoring(
    header: _Header,
    value: str,
    token: re.Pattern[str],
    fields: dict[str, tuple[str, ...]],
    number: int,
    path: str,
    code: str,
) -> None:
    position = 0
    found: dict[str, Decimal] = {}
    while position < len(value):
        match = token.match(value, position)
        if match is None:
            raise FormatError(path, number, f"cannot read the scoring ({code}) at {value[position:][:12]!r}")
        name, points = match.group(1).upper(), Decimal(match.group(2))
        if name not in fields:
            raise FormatError(path, number, f"unknown scoring code {name!r} in {code}")
        for attribute in fields[name]:
            if attribute in found and found[attribute] != points:
                raise FormatError(path, number, f"{code} gives {attribute.replace('_', ' ')} two values")
            found[attribute] = points
        position = match.end()
    header.scoring.update(found)
    header.scoring_line = number


def _player_line(line: str, number: int, path: str, *, by_bytes: bool = False) -> _PlayerLine:
    """One 001 line cut by column; ``by_bytes``: ``line`` is UTF-8 bytes as Latin-1 (one character per byte)."""

    def columns(first: int, last: int) -> str:
        text = line[first - 1 : last].strip()
        if by_bytes and not text.isascii():
            try:
                return text.encode("latin-1").decode("utf-8")
            except UnicodeDecodeError:
                raise FormatError(path, number, f"columns {first}-{last} cut a character in two") from None
        return text

    if line[8:9].strip():
        raise FormatError(path, number, "column 9 must be blank (the starting rank is in columns 5-8)")
    start_no = _number(columns(5, 8), path, number, "the starting rank (columns 5-8)")
    if start_no < 1:
        raise FormatError(path, number, "the starting rank (columns 5-8) must be at least 1")
    rating_text = columns(49, 52)
    rating = _number(rating_text, path, number, "the rating (columns 49-52)") if rating_text else 0
    if rating > 4000:
        raise FormatError(path, number, f"the rating (columns 49-52) {rating} is above 4000")
    points_text = columns(81, 84)
    points: Fraction | None = None
    if points_text:
        if not _POINTS.fullmatch(points_text):
            raise FormatError(path, number, f"the points (columns 81-84) {points_text!r} are not a number")
        points = Fraction(Decimal(points_text))
    rank_text = columns(86, 89)
    rank = _number(rank_text, path, number, "the rank (columns 86-89)") if rank_text else None
    if line[89:91].strip():
        raise FormatError(path, number, "columns 90-91 must be blank (round 1 starts at column 92)")
    player = Player(
        start_no=start_no,
        name=columns(15, 47),
        rating=rating,
        title=columns(11, 13),
        federation=columns(54, 56),
        fide_id=columns(58, 68),
        sex=columns(10, 10),
        birth=columns(70, 79),
    )
    rest = line[_FIRST_BLOCK:]
    count = -(-len(rest) // _BLOCK)
    if count > _MAX_ROUNDS:
        raise FormatError(path, number, f"more than {_MAX_ROUNDS} rounds")
    blocks = tuple(_block(rest[k * _BLOCK : (k + 1) * _BLOCK], k + 1, number, path) for k in range(count))
    return _PlayerLine(number, player, points, points_text, blocks, rank or None)


def _block(chunk: str, round_: int, number: int, path: str) -> _Block | None:
    """One round's ten columns, or ``None`` when they are all blank."""
    written = len(chunk.rstrip())
    chunk = chunk.ljust(_BLOCK)
    if not chunk.strip():
        return None
    column = _FIRST_BLOCK + 1 + (round_ - 1) * _BLOCK
    opponent_text = chunk[:4]
    if (
        chunk[4] != " "
        or chunk[6] != " "
        or chunk[8:].strip()
        or not (not opponent_text.strip() or _OPPONENT.fullmatch(opponent_text))
    ):
        raise FormatError(
            path,
            number,
            f"round {round_} is misaligned: columns {column}-{column + 9} should read like '   5 w 1  ', not {chunk!r}",
        )
    colour = chunk[5].lower()
    if colour not in _COLOURS:
        raise FormatError(path, number, f"round {round_}: unknown colour {chunk[5]!r} (column {column + 5})")
    code = chunk[7].upper()
    if code not in _CODES:
        raise FormatError(path, number, f"round {round_}: unknown result code {chunk[7]!r} (column {column + 7})")
    opponent = int(opponent_text) if opponent_text.strip() else 0
    if opponent and colour == " ":
        if written <= 5:  # nothing after the opponent's number: the line (or the file) was cut
            raise FormatError(
                path,
                number,
                f"round {round_} is cut short: the line ends after opponent {opponent} "
                f"(column {column + written - 1}); a game needs its colour in column {column + 5} "
                f"and its result in column {column + 7}",
            )
        raise FormatError(
            path, number, f"round {round_}: a game against {opponent} needs colour w or b in column {column + 5}"
        )
    return _Block(opponent, "-" if colour == " " else colour, code)


def _schedule_of(lines: list[_PlayerLine], rounds: int, n: int) -> tuple[tuple[tuple[int, int], ...], ...] | None:
    """The pairings of every round, when the file pairs every round in full.

    A file written during the event lists future rounds' pairings with blank
    results; a finished one lists all of them.  Either way the schedule is
    known and results outside it can be refused.  ``None`` when any round
    is not fully paired with colours (then the schedule is unknown).
    """
    schedule = []
    for r in range(1, rounds + 1):
        pairs = []
        for pl in lines:
            block = pl.blocks[r - 1] if r <= len(pl.blocks) else None
            if block is not None and block.opponent > 0 and block.colour == "w":
                pairs.append((pl.player.start_no, block.opponent))
        if len(pairs) != n // 2:
            return None
        schedule.append(tuple(sorted(pairs)))
    return tuple(schedule)


def _number(text: str, path: str, number: int, what: str) -> int:
    if not _DIGITS.fullmatch(text) or len(text) > 6:
        raise FormatError(path, number, f"{what} {text!r} is not a number")
    return int(text)


def _tournament_file(
    header: _Header,
    lines: list[_PlayerLine],
    path: str,
    tournament_id: str | None,
    final: bool,
    notes: tuple[str, ...],
    rules: Rules | None = None,
) -> TournamentFile:
    if not lines:
        raise FormatError(path, 0, "no player records (001 lines)")
    lines.sort(key=lambda pl: pl.player.start_no)
    by_no = {pl.player.start_no: pl for pl in lines}  # start ranks are unique: parse_trf refused repeats
    n = len(lines)
    if n < 2:
        raise FormatError(path, lines[0].line, "a round robin needs at least 2 players")

    tid = tournament_id_for(path, header.name, tournament_id)
    # rounds with any result; later rounds may only list pairings (blank results)
    played = max(
        (
            r
            for pl in lines
            for r, b in enumerate(pl.blocks, start=1)
            if b is not None and (b.code != " " or b.opponent == 0)
        ),
        default=0,
    )
    paired = max((len(pl.blocks) for pl in lines), default=0)
    # a blank result before the last round with a game result is an unplayed game; in that round (and in
    # the rounds after it, which only list pairings) it is a game still to come, unless the event is over.
    # Byes do not count: they are known as soon as a round is paired.
    decided = max(
        (r for pl in lines for r, b in enumerate(pl.blocks, start=1) if b is not None and b.opponent and b.code != " "),
        default=0,
    )
    last = max(played, paired) if final else played
    events: list[Event] = []
    where: dict[str, int] = {}
    for r in range(1, last + 1):
        unplayed = final or r < decided
        byes: list[ByeRecorded] = []
        for pl in lines:
            event = _round_event(pl, r, by_no, tid, path, unplayed=unplayed)
            if isinstance(event, ByeRecorded):
                byes.append(event)
            elif event is not None:
                events.append(event)
                where[event.id] = pl.line
        for bye in byes:
            events.append(bye)
            where[bye.id] = by_no[bye.player].line

    known = max(header.rounds, played, paired)
    fmt: Format = header.format_hint or ("double" if known >= 2 * (n - 1) else "single")
    cycles = 2 if fmt == "double" else 1
    rounds = max(known, (n - 1 if n % 2 == 0 else n) * cycles)
    opened = TournamentOpened(
        id=f"{tid}/opened",
        tournament=tid,
        name=header.name if header.name is not None else file_stem(path)[:200],
        players=tuple(pl.player for pl in lines),
        format=fmt,
        rounds=rounds,
        scoring=_scoring_of(header, path),
        tiebreaks=_tiebreaks_of(header, path, rules or rules_of(header.records)),
        schedule=_schedule_of(lines, rounds, n),
        records=tuple(header.records),
        rules=rules or rules_of(header.records),
    )
    tf, state = checked_file(path, opened, events, where, notes + _blank_notes(lines, decided, last, final))
    tf = replace(tf, official=_official(header, lines, opened, path))
    for pl in lines:
        score = state.units.points(state.score[state.index[pl.player.start_no]])
        if pl.points is not None and pl.points != score:
            raise FormatError(
                path,
                pl.line,
                f"the points column says {pl.points_text} but the results of player {pl.player.start_no} "
                f"add up to {_points_text(score)}",
            )
    return tf


def _official(header: _Header, lines: list[_PlayerLine], opened: TournamentOpened, path: str) -> tuple[Official, ...]:
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
    for number, start_no, texts in header.values:
        if start_no not in known:
            raise FormatError(path, number, f"XXT for starting rank {start_no}, which has no 001 line")
        if len(texts) != len(codes):
            raise FormatError(
                path, number, f"XXT has {len(texts)} values for the {len(codes)} tie-breaks {','.join(codes)}"
            )
        parsed: dict[str, Fraction] = {}
        for code, text in zip(codes, texts, strict=True):
            try:
                parsed[code] = Fraction(Decimal(text.replace("½", ".5") if text != "½" else "0.5"))
            except (ArithmeticError, ValueError):
                raise FormatError(path, number, f"the XXT value {text!r} for {code} is not a number") from None
        values[start_no] = parsed
    return tuple(
        Official(pl.player.start_no, pl.rank, values.get(pl.player.start_no, {}))
        for pl in lines
        if pl.rank is not None or pl.player.start_no in values
    )


def _blank_notes(lines: list[_PlayerLine], decided: int, last: int, final: bool) -> tuple[str, ...]:
    """Which reading of a blank result in a paired round was used, round by round (issue 19).

    Blank is ambiguous: the TRF specification (blank = ``Z``) and the FIDE TEC
    tie-break server read it as an unplayed game worth 0 — a withdrawal left
    in the file — while tracker's own export writes it for games still to be
    played.  ``decided`` is the last round with a game result.
    """
    notes = []
    by_no = {pl.player.start_no: pl for pl in lines}
    for r in range(1, max(last, decided) + 1):
        pairs = [
            f"{pl.player.start_no}–{block.opponent}"
            for pl in lines
            if (block := pl.block(r)) is not None
            and block.opponent in by_no
            and block.colour == "w"
            and block.code == " "
            and (other := by_no[block.opponent].block(r)) is not None
            and other.code == " "
        ]
        if not pairs:
            continue
        shown = ", ".join(pairs[:8]) + (f" and {len(pairs) - 8} more" if len(pairs) > 8 else "")
        if final:
            notes.append(f"round {r}: no result for {shown}: read as unplayed (0 points, no game) because of --final")
        elif r < decided:
            notes.append(
                f"round {r}: no result for {shown} in a round before the last round with results ({decided}): "
                "read as unplayed (0 points, no game), as the TRF specification and the FIDE TEC server do"
            )
        elif r == decided:
            notes.append(
                f"round {r}: no result yet for {shown} in the last round with results: read as games still "
                "to be played (the standings stay provisional); --final reads them as unplayed"
            )
    return tuple(notes)


def _round_event(
    pl: _PlayerLine, r: int, by_no: dict[int, _PlayerLine], tid: str, path: str, *, unplayed: bool = False
) -> ResultRecorded | ByeRecorded | None:
    """What ``pl``'s block of round ``r`` records, checked against the opponent's line.

    ``None`` for Black's side of a game (White's line records it) and for a
    game whose result is not in yet.  A game both lines leave blank is,
    when ``unplayed``, an unplayed game: a zero bye for each player (on each
    one's own line) — 0 points, not a game for Koya, SB or direct encounter,
    as the specification's "blank = ``Z``" says.
    """
    no = pl.player.start_no
    block = pl.block(r)
    if block is None or block.opponent == 0:
        code = block.code if block is not None else " "
        if block is not None and block.colour != "-":
            raise FormatError(path, pl.line, f"round {r}: a bye (opponent 0000) has colour {block.colour}")
        return ByeRecorded(id=bye_id(tid, r, no), tournament=tid, round=r, player=no, kind=_BYE_KINDS[code])
    if block.code in _BYE_ONLY_CODES:
        raise FormatError(path, pl.line, f"round {r}: bye code {block.code} with opponent {block.opponent}")
    opponent = by_no.get(block.opponent)
    if opponent is None:
        raise FormatError(path, pl.line, f"round {r}: opponent {block.opponent} is not a player in this file")
    if opponent is pl:
        raise FormatError(path, pl.line, f"round {r}: player {no} is paired with himself")
    if block.colour == "-":
        raise FormatError(path, pl.line, f"round {r}: a game against {block.opponent} needs colour w or b")
    other = opponent.block(r)
    if other is None or other.opponent != no:
        said = other.describe() if other is not None else "nothing"
        raise FormatError(
            path,
            pl.line,
            f"round {r}: player {no} is paired with {block.opponent}, but line {opponent.line} "
            f"(player {block.opponent}) has {said} in that round",
        )
    if other.colour != _OPPOSITE[block.colour]:
        raise FormatError(
            path,
            pl.line,
            f"round {r}: players {no} and {block.opponent} both have colour {block.colour!r} "
            f"(line {opponent.line} has {other.colour!r})",
        )
    if (block.code, other.code) == (" ", " "):
        if unplayed:
            # paired but never played: the zero bye replaces the scheduled game
            return ByeRecorded(
                id=bye_id(tid, r, no), tournament=tid, round=r, player=no, kind="zero", replaces_game=True
            )
        return None
    if block.colour == "b":
        return None
    codes = (block.code, other.code)
    read = RESULT_OF_CODES.get(codes)
    if read is None:
        raise FormatError(
            path,
            pl.line,
            f"round {r}: codes {block.code.strip() or 'blank'} (player {no}, White) and "
            f"{other.code.strip() or 'blank'} (player {block.opponent}, Black, line {opponent.line}) "
            "do not make one result",
        )
    result, short = read
    return ResultRecorded(
        id=game_id(tid, r, no, block.opponent),
        tournament=tid,
        round=r,
        white=no,
        black=block.opponent,
        result=result,
        short=short,
    )


def _scoring_of(header: _Header, path: str) -> Scoring:
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


_DATE: Final = re.compile(r"(\d{4})[/.-](\d{1,2})[/.-](\d{1,2})")


def _tiebreaks_of(header: _Header, path: str, rules: Rules) -> tuple[str, ...]:
    """212 when present (it defines the standings), else 202 with ``PTS`` first, else the default order."""
    chosen = header.tiebreaks_212 or header.tiebreaks_202
    if chosen is None:
        return DEFAULT_TIEBREAKS
    number, codes = chosen
    try:
        parsed = parse_tiebreaks(codes, rules)
    except EventRejected as exc:
        raise FormatError(path, number, exc.reason) from None
    if len(parsed) > _MAX_CODES:
        raise FormatError(path, number, f"more than {_MAX_CODES} tie-break codes")
    return tuple(tb.code for tb in parsed)


# -- writing ---------------------------------------------------------------------------------


def export_trf(t: Tournament) -> str:
    """The tournament's live state as a TRF26 file (text, ``\\n`` line ends).

    Header: ``012`` name, ``062`` player count, ``XXR`` and ``142`` rounds,
    ``162`` when the scoring is not 1-½-0 (plus JaVaFo ``XXS`` for what 162
    cannot say: forfeit-win, bye and forfeit-loss values that differ from a
    win, a draw or each other), ``202`` (tie-breaks without ``PTS``) and
    ``212`` (with ``PTS``), ``192`` only when the format would otherwise be
    misread from the rounds, then the records kept from the file the
    tournament came from.  Then one ``001`` line per player in start-rank
    order with the rank from the current standings and the points.

    The points column holds the score *in the tournament's own scoring*
    (TRF26 and the FIDE TEC tie-break server read it so): 7 wins and a draw
    under 3-1-0 is ``22.0``.  It is written with one decimal (``3.5``,
    ``22.0``; more only for scoring with quarters), right-aligned in columns
    81–84.

    Round blocks go up to the last round anyone has a result in, or to the
    last scheduled round when the tournament has a schedule (future rounds
    then list their pairings with blank results; a scheduled game both
    players have a zero bye for, before the last round with a game result, is
    written as its pairing with a blank result — the unplayed game
    :func:`parse_trf` reads it as).  A player with nothing yet
    in a round gets the pairing with a blank result when the tournament has
    a schedule, and a blank block otherwise — which
    TRF (and :func:`parse_trf`) reads as a zero bye: without the pairing,
    TRF cannot say "paired, not finished".  Withdrawals, the Koya basis and
    the schedule itself have no TRF record and are not written.  Raises
    :class:`ValueError` only for a score that does not fit the four columns
    (above 9999 points).
    """
    opened = t.opened
    ranks = {row.start_no: row.rank for row in standings(t).rows}
    lines = [f"012 {_one_line(t.name)}", f"062 {t.n}", f"XXR {t.rounds}", f"142 {t.rounds}"]
    lines += _scoring_records(opened.scoring)
    codes = [tb.code for tb in t.tiebreaks if tb.kind != "PTS"]
    if codes:
        lines.append("202 " + ",".join(codes))
    lines.append("212 " + ",".join(tb.code for tb in t.tiebreaks))
    told = any(r[:3] in ("092", "192") and _format_hint(r) is not None for r in opened.records)
    read_as = "double" if t.rounds >= 2 * (t.n - 1) else "single"
    if not told and opened.format != read_as:
        lines.append("192 BERGER_DOUBLEROUNDROBIN" if opened.format == "double" else "192 BERGER_ROUNDROBIN")
    lines += [_one_line(record) for record in opened.records]  # a record is one line, whatever the event carried
    last = max((r for entries in t.entries for r in entries), default=0)
    last = max(last, max(t.schedule, default=0) if t.schedule else 0)  # future rounds: pairings only
    decided = max((r for entries in t.entries for r, e in entries.items() if e.is_game), default=0)
    for i, player in enumerate(opened.players):
        points = _points_text(t.units.points(t.score[i]))
        if len(points) > 4 and t.score[i] % t.units.denominator == 0:
            points = points.removesuffix(".0")
        if len(points) > 4:
            raise ValueError(f"a score of {points} points does not fit TRF's points column")
        static = (
            f"001 {player.start_no:>4} {_one_line(player.sex)[:1]:1}{_one_line(player.title)[:3]:>3} "
            f"{_one_line(player.name)[:33]:<33} {player.rating or '':>4} {_one_line(player.federation)[:3]:<3} "
            f"{_one_line(player.fide_id)[:11]:>11} {_one_line(player.birth)[:10]:<10} "
            f"{points:>4} {ranks[player.start_no]:>4}  "
        )
        blocks = "".join(_export_block(t, i, r, decided) for r in range(1, last + 1))
        lines.append((static + blocks).rstrip())
    return "\n".join(lines) + "\n"


def _export_block(t: Tournament, i: int, r: int, decided: int) -> str:
    entry = t.entries[i].get(r)
    if entry is not None:
        if entry.code == "Z" and r < decided and (pairing := _unplayed_pairing(t, i, r)) is not None:
            return pairing
        if not entry.is_game:
            return f"0000 - {entry.code}  "
        colour = "w" if entry.white else "b"
        return f"{t.start_nos[entry.opponent]:>4} {colour} {entry.code}  "
    for white, black in (t.schedule or {}).get(r, ()):
        if i in (white, black):
            opponent, colour = (black, "w") if i == white else (white, "b")
            return f"{t.start_nos[opponent]:>4} {colour}    "
    return " " * _BLOCK


def _unplayed_pairing(t: Tournament, i: int, r: int) -> str | None:
    """A scheduled game both players have a zero bye for, written as the pairing with a blank result.

    :func:`parse_trf` reads that back as the same two zero byes (an unplayed
    game) when a later round has results, and it keeps the pairing in the
    file, as the arbiter's program wrote it.  ``None`` when ``i`` has no such game.
    """
    for white, black in (t.schedule or {}).get(r, ()):
        if i in (white, black):
            opponent, colour = (black, "w") if i == white else (white, "b")
            other = t.entries[opponent].get(r)
            if other is not None and other.code == "Z":
                return f"{t.start_nos[opponent]:>4} {colour}    "
    return None


def _scoring_records(s: Scoring) -> list[str]:
    if s == Scoring():
        return []
    parts = [("W", s.win), ("D", s.draw), ("L", s.loss)]
    if s.forfeit_loss == s.zero_bye != 0:
        parts.append(("A", s.zero_bye))
    if s.pab is not None:
        parts.append(("P", s.pab))
    records = ["162  " + "    ".join(f"{code}{_points_text(Fraction(v)):>4}" for code, v in parts)]
    extra = [("FW", s.forfeit_win), ("FPB", s.full_bye), ("HPB", s.half_bye)]
    if s.forfeit_loss != s.zero_bye:
        extra += [("ZPB", s.zero_bye), ("FL", s.forfeit_loss)]
    given = [f"{code}={_points_text(Fraction(v))}" for code, v in extra if v is not None]
    if given:
        records.append("XXS " + " ".join(given))
    return records


def _points_text(value: Fraction) -> str:
    """``3.5``, ``22.0``, ``1.25``: at least one decimal, exact (scores of decimal scoring terminate)."""
    if value.denominator == 1:
        return f"{value.numerator}.0"
    text = format((Decimal(value.numerator) / Decimal(value.denominator)).normalize(), "f")
    return text if "." in text else text + ".0"


def _one_line(text: str) -> str:
    """``text`` with control characters (line breaks included) as spaces: a field can never add or split a line."""
    return re.sub(r"[\x00-\x1f\x7f\x85\u2028\u2029]", " ", text)


__all__ = ["export_trf", "parse_trf"]
