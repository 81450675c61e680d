"""The ``001`` player line, cut by column, and the column formats the reader and the writer share.

FIDE C.04 Annex 2 / TRF26: start rank 5–8, sex 10, title 11–13, name 15–47,
rating 49–52, federation 54–56, FIDE id 58–68, birth date 70–79, points
81–84, rank 86–89, then one block of ten columns per round from column 92
(opponent 92–95, colour 97, result 99).  Columns are characters; a line with
non-ASCII characters that only parses with columns counted in UTF-8 bytes (a
program that pads names to 33 bytes) is read that way (:func:`player_line_aligned`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Final

from tracker.core.errors import FormatError
from tracker.core.events import ByeKind, Player

#: Code of a block without an opponent → the bye it records.
BYE_KINDS: Final[dict[str, ByeKind]] = {
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
BYE_ONLY_CODES: Final = frozenset("HFUZ")
CODES: Final = frozenset("10=WDL+-HFUZ ")
COLOURS: Final = frozenset("wb- ")
OPPOSITE: Final = {"w": "b", "b": "w"}
FIRST_BLOCK: Final = 91  # 0-based index of column 92, where round 1 starts
BLOCK: Final = 10
MAX_ROUNDS: Final = 999
DIGITS: Final = re.compile(r"[0-9]+")
_OPPONENT: Final = re.compile(r" *[0-9]+")
_POINTS: Final = re.compile(r"-?[0-9]{1,4}(?:\.[0-9]{1,3})?")


@dataclass(frozen=True, slots=True)
class Block:
    """One round of a 001 line: opponent (0 = none), colour ``w``/``b``/``-``, upper-case code."""

    opponent: int
    colour: str
    code: str

    def describe(self) -> str:
        if self.opponent == 0:
            return f"no opponent (code {self.code.strip() or 'blank'})"
        return f"opponent {self.opponent}, colour {self.colour}, code {self.code.strip() or 'blank'}"


@dataclass(frozen=True, slots=True)
class PlayerLine:
    """A 001 line read: its line number, the player, the points column (as read and as written), the rounds."""

    line: int
    player: Player
    points: Fraction | None
    points_text: str
    blocks: tuple[Block | None, ...]
    rank: int | None = None

    def block(self, round_: int) -> Block | None:
        return self.blocks[round_ - 1] if round_ <= len(self.blocks) else None


def number(text: str, path: str, line: int, what: str) -> int:
    """``text`` as a non-negative integer of at most six digits; raises :class:`FormatError` naming ``what``."""
    if not DIGITS.fullmatch(text) or len(text) > 6:
        raise FormatError(path, line, f"{what} {text!r} is not a number")
    return int(text)


def player_line_aligned(line: str, number_: int, path: str) -> tuple[PlayerLine, bool]:
    """A 001 line read by character columns, else — when only that parses — by UTF-8 byte columns.

    TRF counts columns in characters; some programs pad UTF-8 names to 33
    *bytes*, so every column after an accented name sits one character
    early.  Returns the line and whether it was read by bytes; raises the
    character reading's :class:`FormatError` when neither reading parses.
    """
    try:
        return player_line(line, number_, path), False
    except FormatError:
        if line.isascii():
            raise
        try:
            return player_line(line.encode("utf-8").decode("latin-1"), number_, path, by_bytes=True), True
        except FormatError:
            pass
        raise


def player_line(line: str, line_no: int, path: str, *, by_bytes: bool = False) -> PlayerLine:
    """One 001 line cut by column; ``by_bytes``: ``line`` is UTF-8 bytes as Latin-1 (one character per byte)."""

    def columns(first: int, last: int) -> str:
        text = line[first - 1 : last].strip()
        if by_bytes and not text.isascii():
            try:
                return text.encode("latin-1").decode("utf-8")
            except UnicodeDecodeError:
                raise FormatError(path, line_no, f"columns {first}-{last} cut a character in two") from None
        return text

    if line[8:9].strip():
        raise FormatError(path, line_no, "column 9 must be blank (the starting rank is in columns 5-8)")
    start_no = number(columns(5, 8), path, line_no, "the starting rank (columns 5-8)")
    if start_no < 1:
        raise FormatError(path, line_no, "the starting rank (columns 5-8) must be at least 1")
    rating_text = columns(49, 52)
    rating = number(rating_text, path, line_no, "the rating (columns 49-52)") if rating_text else 0
    if rating > 4000:
        raise FormatError(path, line_no, f"the rating (columns 49-52) {rating} is above 4000")
    points_text = columns(81, 84)
    points: Fraction | None = None
    if points_text:
        if not _POINTS.fullmatch(points_text):
            raise FormatError(path, line_no, f"the points (columns 81-84) {points_text!r} are not a number")
        points = Fraction(Decimal(points_text))
    rank_text = columns(86, 89)
    rank = number(rank_text, path, line_no, "the rank (columns 86-89)") if rank_text else None
    if line[89:91].strip():
        raise FormatError(path, line_no, "columns 90-91 must be blank (round 1 starts at column 92)")
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
    rest = line[FIRST_BLOCK:]
    count = -(-len(rest) // BLOCK)
    if count > MAX_ROUNDS:
        raise FormatError(path, line_no, f"more than {MAX_ROUNDS} rounds")
    blocks = tuple(_block(rest[k * BLOCK : (k + 1) * BLOCK], k + 1, line_no, path) for k in range(count))
    return PlayerLine(line_no, player, points, points_text, blocks, rank or None)


def _block(chunk: str, round_: int, line_no: int, path: str) -> Block | None:
    """One round's ten columns, or ``None`` when they are all blank."""
    written = len(chunk.rstrip())
    chunk = chunk.ljust(BLOCK)
    if not chunk.strip():
        return None
    column = FIRST_BLOCK + 1 + (round_ - 1) * BLOCK
    opponent_text = chunk[:4]
    if (
        chunk[4] != " "
        or chunk[6] != " "
        or chunk[8:].strip()
        or not (not opponent_text.strip() or _OPPONENT.fullmatch(opponent_text))
    ):
        raise FormatError(
            path,
            line_no,
            f"round {round_} is misaligned: columns {column}-{column + 9} should read like '   5 w 1  ', not {chunk!r}",
        )
    colour = chunk[5].lower()
    if colour not in COLOURS:
        raise FormatError(path, line_no, f"round {round_}: unknown colour {chunk[5]!r} (column {column + 5})")
    code = chunk[7].upper()
    if code not in CODES:
        raise FormatError(path, line_no, f"round {round_}: unknown result code {chunk[7]!r} (column {column + 7})")
    opponent = int(opponent_text) if opponent_text.strip() else 0
    if opponent and colour == " ":
        if written <= 5:  # nothing after the opponent's number: the line (or the file) was cut
            raise FormatError(
                path,
                line_no,
                f"round {round_} is cut short: the line ends after opponent {opponent} "
                f"(column {column + written - 1}); a game needs its colour in column {column + 5} "
                f"and its result in column {column + 7}",
            )
        raise FormatError(
            path, line_no, f"round {round_}: a game against {opponent} needs colour w or b in column {column + 5}"
        )
    return Block(opponent, "-" if colour == " " else colour, code)


def points_text(value: Fraction) -> str:
    """``3.5``, ``22.0``, ``1.25``: at least one decimal, exact (scores of decimal scoring terminate)."""
    if value.denominator == 1:
        return f"{value.numerator}.0"
    text = format((Decimal(value.numerator) / Decimal(value.denominator)).normalize(), "f")
    return text if "." in text else text + ".0"


def one_line(text: str) -> str:
    """``text`` with control characters (line breaks included) as spaces: a field can never add or split a line."""
    return re.sub(r"[\x00-\x1f\x7f\x85\u2028\u2029]", " ", text)
