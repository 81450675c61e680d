"""Writing a TRF26 file of the live state: :func:`export_trf` (it reads back as the same tournament).

Encoding
--------

The FIDE TEC tie-break server reads a TRF as Latin-1 (ISO 8859-1) unless told otherwise, and refuses
a file whose columns do not line up in bytes ("misaligned data, may be bad character encoding"), which a
UTF-8 name with an accent makes.  So the default is ``latin-1``: every text field is written as Latin-1
holds it, and a character Latin-1 cannot hold is transliterated as the FIDE rating list writes names
(:func:`latin1`: ``Ł`` → ``L``, ``Ş`` → ``S``, ``Щукин`` → ``Shchukin``), then the file is encoded
Latin-1 (:func:`trf_bytes`), one byte per column.  ``utf-8`` keeps every name as it is, in UTF-8
(columns counted in characters, as TRF26 says; tracker and most programs read it).
:func:`tracker.formats.files.decode_text` reads either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal

from anyascii import anyascii

from tracker.core.crosstable import Tournament
from tracker.core.events import Teams
from tracker.core.standings import standings
from tracker.core.teams.setup import setup_of
from tracker.formats.trf.columns import BLOCK, one_line, points_text
from tracker.formats.trf.records import format_hint, pending_records, scoring_records, withdrawal_record

#: The encodings a TRF is written in (``--encoding``); the first is the default.
TrfEncoding = Literal["latin-1", "utf-8"]
ENCODINGS: Final[tuple[TrfEncoding, ...]] = ("latin-1", "utf-8")
#: Letters whose transliteration is no letter: the Cyrillic hard and soft signs are dropped, as in FIDE's list.
_DROPPED: Final = {"ъ": "", "ь": "", "Ъ": "", "Ь": ""}


def latin1(text: str) -> str:
    """``text`` with every character Latin-1 cannot hold transliterated to ASCII (Latin-1's own letters kept).

    ``Łukasz`` → ``Lukasz``, ``Şirin`` → ``Sirin``, ``Щукин`` → ``Shchukin``, ``ЩУКИН`` → ``SHCHUKIN``
    (a capital written as several letters stays all capitals inside a word in capitals); the C1 control
    characters (U+0080–U+009F, which Windows-1252 readers take for letters) become spaces.
    """
    if all(ord(c) < 0x80 or 0xA0 <= ord(c) <= 0xFF for c in text):
        return text
    out = []
    for k, c in enumerate(text):
        code = ord(c)
        if code < 0x80 or 0xA0 <= code <= 0xFF:
            out.append(c)
            continue
        if code <= 0x9F:
            out.append(" ")
            continue
        spelled = _DROPPED[c] if c in _DROPPED else anyascii(c)
        if len(spelled) > 1 and c.isupper():
            after = text[k + 1 : k + 2]
            before = text[k - 1 : k]
            if after.isupper() or (not after.isalpha() and before.isupper()):
                spelled = spelled.upper()
        out.append(spelled)
    return "".join(out)


def trf_bytes(t: Tournament, encoding: TrfEncoding = "latin-1") -> bytes:
    """:func:`export_trf` encoded in ``encoding``: the bytes of the file to write or serve."""
    return export_trf(t, encoding).encode(encoding)


def export_trf(t: Tournament, encoding: TrfEncoding = "latin-1") -> str:
    """The tournament's live state as a TRF26 file (text, ``\\n`` line ends), every character one ``encoding`` holds.

    Under ``latin-1`` (the default) every text field goes through :func:`latin1` before it is padded to its
    columns, so the file encoded Latin-1 has its columns aligned in bytes; under ``utf-8`` names are kept.

    Header: ``012`` name, ``062`` player count, ``XXR`` and ``142`` rounds,
    ``162`` when the scoring is not 1-½-0 (plus JaVaFo ``XXS`` for what 162
    cannot say: forfeit-win, bye and forfeit-loss values that differ from a
    win, a draw or each other), ``202`` (tie-breaks without ``PTS``) and
    ``212`` (with ``PTS``), ``192`` only when the format would otherwise be
    misread from the rounds, then the records kept from the file the
    tournament came from, then tracker's ``XXN`` (nothing recorded yet) and
    ``XXW`` (withdrawals) where there are some.  Then one ``001`` line per
    player in start-rank order with the rank from the current standings and
    the points.

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
    :func:`~tracker.formats.trf.parse_trf` reads it as).  A player with
    nothing yet in a round gets the pairing with a blank result when the
    tournament has a schedule and the opponent has nothing either, and a
    blank block otherwise (no schedule, or the opponent's requested bye
    replaced the game: the pairing is not written, the opponent's line has
    the bye).  TRF reads a blank as a zero bye (and a blank result before
    the last round with results as an unplayed game), so wherever the reader
    would read one of these as something recorded, ``XXN`` lists the player:
    tracker reads the export back as it was, other readers as TRF says.  The
    Koya basis and the schedule itself have no TRF record and are not
    written.  Raises :class:`ValueError` only for a score that does not fit
    the four columns (above 9999 points).
    """
    opened = t.opened
    fit: Callable[[str], str] = latin1 if encoding == "latin-1" else str
    ranks = {row.start_no: row.rank for row in standings(t).rows}
    # a team event's rounds are the team round robin's (its players are counted as one round robin inside)
    rounds = setup_of(opened.teams).team_rounds() if isinstance(opened.teams, Teams) else t.rounds
    lines = [f"012 {fit(one_line(t.name))}", f"062 {t.n}", f"XXR {rounds}", f"142 {rounds}"]
    lines += scoring_records(opened.scoring)
    codes = [tb.code for tb in t.tiebreaks if tb.kind != "PTS"]
    if codes:
        lines.append("202 " + ",".join(codes))
    lines.append("212 " + ",".join(tb.code for tb in t.tiebreaks))
    told = any(r[:3] in ("092", "192") and format_hint(r) is not None for r in opened.records)
    read_as = "double" if t.rounds >= 2 * (t.n - 1) else "single"
    if not told and opened.format != read_as:
        lines.append("192 BERGER_DOUBLEROUNDROBIN" if opened.format == "double" else "192 BERGER_ROUNDROBIN")
    lines += [fit(one_line(record)) for record in opened.records]  # a record is one line, whatever the event carried
    entered = max((r for entries in t.entries for r in entries), default=0)  # what the reader calls "played"
    last = max(entered, max(t.schedule, default=0) if t.schedule else 0)  # future rounds: pairings only
    decided = max((r for entries in t.entries for r, e in entries.items() if e.is_game), default=0)
    rows: list[str] = []
    waiting: dict[int, list[int]] = {}  # round → players whose blank must not be read as a record (XXN)
    for i, player in enumerate(opened.players):
        score = points_text(t.units.points(t.score[i]))
        if len(score) > 4 and t.score[i] % t.units.denominator == 0:
            score = score.removesuffix(".0")
        if len(score) > 4:
            raise ValueError(f"a score of {score} points does not fit TRF's points column")
        static = (
            f"001 {player.start_no:>4} {fit(one_line(player.sex))[:1]:1}{fit(one_line(player.title))[:3]:>3} "
            f"{fit(one_line(player.name))[:33]:<33} {player.rating or '':>4} {fit(one_line(player.federation))[:3]:<3} "
            f"{fit(one_line(player.fide_id))[:11]:>11} {fit(one_line(player.birth))[:10]:<10} "
            f"{score:>4} {ranks[player.start_no]:>4}  "
        )
        blocks = []
        for r in range(1, last + 1):
            text, paired = _block(t, i, r, decided)
            blocks.append(text)
            # the reader reads rounds up to the last one with an entry: there a blank is a zero bye, and a
            # blank result an unplayed game before the last round with a game result
            if r <= entered and r not in t.entries[i] and not (paired and r >= decided):
                waiting.setdefault(r, []).append(player.start_no)
        rows.append((static + "".join(blocks)).rstrip())
    for r in sorted(waiting):
        lines += pending_records(r, waiting[r])
    lines += [withdrawal_record(t.start_nos[i], t.withdrawn_from[i] or None, "") for i in range(t.n) if t.withdrawn[i]]
    return "\n".join([*lines, *rows]) + "\n"


def _block(t: Tournament, i: int, r: int, decided: int) -> tuple[str, bool]:
    """Player ``i``'s ten columns of round ``r``, and whether they are a pairing with a blank result."""
    entry = t.entries[i].get(r)
    if entry is not None:
        if entry.code == "Z" and r < decided and (pairing := _unplayed_pairing(t, i, r)) is not None:
            return pairing, True
        if not entry.is_game:
            return f"0000 - {entry.code}  ", False
        colour = "w" if entry.white else "b"
        return f"{t.start_nos[entry.opponent]:>4} {colour} {entry.code}  ", False
    for white, black in (t.schedule or {}).get(r, ()):
        if i in (white, black):
            opponent, colour = (black, "w") if i == white else (white, "b")
            if r in t.entries[opponent]:
                break  # the opponent's (requested) bye replaced the game: no pairing to write
            return f"{t.start_nos[opponent]:>4} {colour}    ", True
    return " " * BLOCK, False


def _unplayed_pairing(t: Tournament, i: int, r: int) -> str | None:
    """A scheduled game both players have a zero bye for, written as the pairing with a blank result.

    :func:`~tracker.formats.trf.parse_trf` reads that back as the same two
    zero byes (an unplayed game) when a later round has results, and it
    keeps the pairing in the file, as the arbiter's program wrote it.
    ``None`` when ``i`` has no such game.
    """
    for white, black in (t.schedule or {}).get(r, ()):
        if i in (white, black):
            opponent, colour = (black, "w") if i == white else (white, "b")
            other = t.entries[opponent].get(r)
            if other is not None and other.code == "Z":
                return f"{t.start_nos[opponent]:>4} {colour}    "
    return None
