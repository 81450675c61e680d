"""Reading a TRF16/TRF26 file: :func:`parse_trf` (see :mod:`tracker.formats.trf` for how it reads)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Final

import msgspec

from tracker.core.codes import RESULT_OF_CODES
from tracker.core.crosstable import Tournament
from tracker.core.errors import FormatError
from tracker.core.events import (
    ByeRecorded,
    Event,
    Format,
    PlayerWithdrawn,
    ResultRecorded,
    Rules,
    Teams,
    TournamentOpened,
)
from tracker.core.phrases import Said, phrase, plural
from tracker.core.teams import TeamSetup
from tracker.core.teams.setup import setup_of, teams_of
from tracker.formats.base import (
    TournamentFile,
    bye_id,
    check_characters,
    checked_file,
    file_stem,
    game_id,
    tournament_id_for,
)
from tracker.formats.trf.columns import (
    BYE_KINDS,
    BYE_ONLY_CODES,
    OPPOSITE,
    PlayerLine,
    player_line,
    player_line_aligned,
    points_text,
)
from tracker.formats.trf.records import (
    Header,
    header_record,
    keep,
    official,
    rules_of,
    scoring_of,
    team_records,
    tiebreaks_of,
)

_MAX_PLAYERS: Final = 500
_RECORD_CODE: Final = re.compile(r"[0-9A-Z]{3}")


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
    round: games by White's start rank, then byes by start rank; then the
    withdrawals (``XXW``) by start rank.  Event ids are
    ``{id}/r{round}/{white}-{black}``, ``{id}/r{round}/bye/{player}`` and
    ``{id}/withdrawn/{player}``.

    The tournament id is ``tournament_id``, else a slug of the ``012`` name,
    else of the file name; ``path`` is used for that and for messages only.
    ``final`` says the event is over: a paired game with a blank result is
    then unplayed in every round, not only before the last round with
    results, and ``XXN`` is ignored (see the package docstring); ``notes``
    say which reading was used.  ``rules`` is the C.07 edition; without it
    the ``042`` start date says (before 1 March 2026: ``2024``, as the FIDE
    TEC server reads it), and without a readable date ``2026``.  TRF26 has
    no record for the edition.

    Raises :class:`FormatError` (path, line, problem) for anything that is
    not a consistent round robin: binary junk, no player lines, a field that
    is not a number or is out of range, a misaligned round block, an unknown
    result code, an opponent that is not in the file, two lines that do not
    agree about a game, a points column that differs from the results, an
    ``XXN`` or ``XXW`` record that contradicts the lines, or any event the
    core would reject (a pair meeting too often, a player paired twice in a
    round).  Nothing partial is returned.
    """
    check_characters(text, path)
    text = text.removeprefix("\ufeff")
    if not text or text.isspace():  # not text.strip(): that would copy a 50 MB file once more
        raise FormatError(path, 0, "empty file")
    header = Header()
    players: list[PlayerLine] = []
    seen: dict[int, int] = {}  # start rank -> line: a repeated line is refused where it is, not after the file
    byte_aligned: list[int] = []  # lines that parse only with columns counted in UTF-8 bytes
    char_aligned: dict[int, tuple[str, int]] = {}  # non-ASCII lines read by characters -> (line, index)
    for line_no, raw in enumerate(_lines(text), start=1):
        line = raw.rstrip()
        if not line:
            continue
        if line.startswith("###"):
            keep(header, line, line_no, path)
            continue
        code = line[:3]
        if not _RECORD_CODE.fullmatch(code) or (len(line) > 3 and line[3] != " "):
            raise FormatError(path, line_no, f"not a TRF record (a record starts with a code like 001): {line[:20]!r}")
        if code == "001":
            pl, by_bytes = player_line_aligned(line, line_no, path)
            if by_bytes:
                byte_aligned.append(line_no)
            elif not line.isascii():
                char_aligned[line_no] = (line, len(players))
            other = seen.setdefault(pl.player.start_no, line_no)
            if other != line_no:
                raise FormatError(path, line_no, f"starting rank {pl.player.start_no} is already used on line {other}")
            if len(players) == _MAX_PLAYERS:
                raise FormatError(path, line_no, f"more than {_MAX_PLAYERS} players")
            players.append(pl)
        else:
            header_record(header, code, line, line_no, path)
    notes: tuple[Said, ...] = ()
    if byte_aligned:
        # the program counts columns in bytes: lines that read both ways are read its way too
        for line_no, (line, k) in char_aligned.items():
            with contextlib.suppress(FormatError):
                players[k] = player_line(line.encode("utf-8").decode("latin-1"), line_no, path, by_bytes=True)
                byte_aligned.append(line_no)
        numbers = sorted(byte_aligned)
        shown = ", ".join(map(str, numbers[:10])) + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")
        notes = (BYTE_ALIGNED(n=len(numbers), lines=shown),)
    return _tournament_file(header, players, path, tournament_id, final, notes, rules)


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


def _schedule_of(
    lines: list[PlayerLine], rounds: int, n: int, pending: dict[int, dict[int, int]]
) -> tuple[tuple[tuple[int, int], ...], ...] | None:
    """The pairings of every round, when the file pairs every round in full.

    A file written during the event lists future rounds' pairings with blank
    results; a finished one lists all of them.  Either way the schedule is
    known and results outside it can be refused.  A round is paired in full
    when it has ``n // 2`` games, or when every player without a game in it
    has a bye there (a requested bye replaced the game) or nothing recorded
    yet (``XXN``: the opponent of such a bye).  ``None`` when a round is not
    (then the schedule is unknown).
    """
    schedule = []
    for r in range(1, rounds + 1):
        pairs = []
        unpaired = []
        for pl in lines:
            block = pl.block(r)
            if block is not None and block.opponent > 0:
                if block.colour == "w":
                    pairs.append((pl.player.start_no, block.opponent))
            elif (block is None or block.code == " ") and pl.player.start_no not in pending.get(r, {}):
                unpaired.append(pl.player.start_no)
        if len(pairs) != n // 2 and unpaired:
            return None
        schedule.append(tuple(sorted(pairs)))
    return tuple(schedule)


def _tournament_file(
    header: Header,
    lines: list[PlayerLine],
    path: str,
    tournament_id: str | None,
    final: bool,
    notes: tuple[Said, ...],
    rules: Rules | None = None,
) -> TournamentFile:
    if not lines:
        raise FormatError(path, 0, "no player records (001 lines)")
    lines.sort(key=lambda pl: pl.player.start_no)
    by_no = {pl.player.start_no: pl for pl in lines}  # start ranks are unique: parse_trf refused repeats
    n = len(lines)
    if n < 2:
        raise FormatError(path, lines[0].line, "a round robin needs at least 2 players")
    pending = {} if final else header.pending
    _check_pending(pending, by_no, path)

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
        waiting = pending.get(r, {})
        for pl in lines:
            if pl.player.start_no in waiting:
                continue  # nothing recorded yet (XXN): checked to be blank by _check_pending
            event = _round_event(pl, r, by_no, tid, path, unplayed=unplayed)
            if isinstance(event, ByeRecorded):
                byes.append(event)
            elif event is not None:
                events.append(event)
                where[event.id] = pl.line
        for bye in byes:
            events.append(bye)
            where[bye.id] = by_no[bye.player].line
    for w in sorted(header.withdrawals, key=lambda w: w.start_no):
        if w.start_no not in by_no:
            raise FormatError(path, w.line, f"XXW for starting rank {w.start_no}, which has no 001 line")
        withdrawal = PlayerWithdrawn(
            id=f"{tid}/withdrawn/{w.start_no}", tournament=tid, player=w.start_no, round=w.round, reason=w.reason
        )
        events.append(withdrawal)
        where[withdrawal.id] = w.line

    known = max(header.rounds, played, paired)
    fmt: Format = header.format_hint or ("double" if known >= 2 * (n - 1) else "single")
    cycles = 2 if fmt == "double" else 1
    rounds = max(known, (n - 1 if n % 2 == 0 else n) * cycles)
    chosen = rules or rules_of(header.records)
    opened = TournamentOpened(
        id=f"{tid}/opened",
        tournament=tid,
        name=header.name if header.name is not None else file_stem(path)[:200],
        players=tuple(pl.player for pl in lines),
        format=fmt,
        rounds=rounds,
        scoring=scoring_of(header, path),
        tiebreaks=tiebreaks_of(header, path, chosen),
        schedule=_schedule_of(lines, rounds, n, pending) or _team_schedule(header, lines, paired, path),
        records=tuple(header.records),
        rules=chosen,
    )
    tf, state = checked_file(path, opened, events, where, notes + _blank_notes(lines, decided, last, final, pending))
    tf = replace(tf, official=official(header, lines, opened, path))
    _check_teams(tf, state, path)
    setup = team_setup_of(tf, path)
    if setup is not None:  # a team event: its teams travel with the opening event (live, replayed, journalled)
        tf = replace(tf, opened=msgspec.structs.replace(tf.opened, teams=teams_of(setup)))
    for pl in lines:
        score = state.units.points(state.score[state.index[pl.player.start_no]])
        if pl.points is not None and pl.points != score:
            raise FormatError(
                path,
                pl.line,
                f"the points column says {pl.points_text} but the results of player {pl.player.start_no} "
                f"add up to {points_text(score)}",
            )
    return tf


def _team_schedule(
    header: Header, lines: list[PlayerLine], paired: int, path: str
) -> tuple[tuple[tuple[int, int], ...], ...] | None:
    """A team file's board pairings, round by round, as far as the file pairs them (``None``: not a team file).

    The players of a team event do not play a round robin of players: their rounds are the teams'.  The
    schedule is what the file pairs (it lets a double team round robin's boards meet twice in the players'
    first cycle: see :func:`tracker.core.checks.check_new_game`).
    """
    if team_records(header.records, path) is None:
        return None
    return tuple(
        tuple(
            sorted(
                (pl.player.start_no, block.opponent)
                for pl in lines
                if (block := pl.block(r)) is not None and block.opponent > 0 and block.colour == "w"
            )
        )
        for r in range(1, paired + 1)
    )


def _check_pending(pending: dict[int, dict[int, int]], by_no: dict[int, PlayerLine], path: str) -> None:
    """Refuse an ``XXN`` that names an unknown player or a round where the player's line has a result or a bye."""
    for r, players in pending.items():
        for start_no, line_no in players.items():
            pl = by_no.get(start_no)
            if pl is None:
                raise FormatError(path, line_no, f"XXN for starting rank {start_no}, which has no 001 line")
            block = pl.block(r)
            if block is not None and block.code != " ":
                raise FormatError(
                    path,
                    line_no,
                    f"XXN says player {start_no} has nothing recorded in round {r}, but line {pl.line} "
                    f"has {block.describe()} there",
                )


BYTE_ALIGNED: Final = plural(
    "formats.trf.byte_aligned",
    "line {lines}: the columns are aligned by UTF-8 bytes, not characters (a name with accents is padded with fewer "
    "spaces): read that way",
    "lines {lines}: the columns are aligned by UTF-8 bytes, not characters (a name with accents is padded with fewer "
    "spaces): read that way",
)
BLANK_FINAL: Final = phrase(
    "formats.trf.blank_final",
    "round {round}: no result for {games}: read as unplayed (0 points, no game) because of --final",
)
BLANK_BEFORE: Final = phrase(
    "formats.trf.blank_before",
    "round {round}: no result for {games} in a round before the last round with results ({decided}): read as "
    "unplayed (0 points, no game), as the TRF specification and the FIDE TEC server do",
)
BLANK_LAST: Final = phrase(
    "formats.trf.blank_last",
    "round {round}: no result yet for {games} in the last round with results: read as games still to be played (the "
    "standings stay provisional); --final reads them as unplayed",
)


def _blank_notes(
    lines: list[PlayerLine], decided: int, last: int, final: bool, pending: dict[int, dict[int, int]]
) -> tuple[Said, ...]:
    """Which reading of a blank result in a paired round was used, round by round (issue 19).

    Blank is ambiguous: the TRF specification (blank = ``Z``) and the FIDE TEC
    tie-break server read it as an unplayed game worth 0 — a withdrawal left
    in the file — while tracker's own export writes it for games still to be
    played (and says so with ``XXN`` before the last round with results:
    those games are not noted).  ``decided`` is the last round with a game result.
    """
    notes: list[Said] = []
    by_no = {pl.player.start_no: pl for pl in lines}
    for r in range(1, max(last, decided) + 1):
        waiting = pending.get(r, {})
        pairs = [
            f"{pl.player.start_no}–{block.opponent}"
            for pl in lines
            if (block := pl.block(r)) is not None
            and block.opponent in by_no
            and block.colour == "w"
            and block.code == " "
            and pl.player.start_no not in waiting
            and (other := by_no[block.opponent].block(r)) is not None
            and other.code == " "
        ]
        if not pairs:
            continue
        shown = ", ".join(pairs[:8]) + (f" and {len(pairs) - 8} more" if len(pairs) > 8 else "")
        if final:
            notes.append(BLANK_FINAL(round=r, games=shown))
        elif r < decided:
            notes.append(BLANK_BEFORE(round=r, games=shown, decided=decided))
        elif r == decided:
            notes.append(BLANK_LAST(round=r, games=shown))
    return tuple(notes)


def _round_event(
    pl: PlayerLine, r: int, by_no: dict[int, PlayerLine], tid: str, path: str, *, unplayed: bool = False
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
        return ByeRecorded(id=bye_id(tid, r, no), tournament=tid, round=r, player=no, kind=BYE_KINDS[code])
    if block.code in BYE_ONLY_CODES:
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
    if other.colour != OPPOSITE[block.colour]:
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


def team_setup_of(tf: TournamentFile, path: str = "") -> TeamSetup | None:
    """The team setup of a team event read from a TRF (``None`` for an individual event); for a file without
    team records, the teams its opening event declares (a PGN's ``WhiteTeam``/``BlackTeam`` tags).

    Read from the team records the opening event keeps verbatim (``013``/``310``, ``352``, ``362`` and a
    ``202``/``212`` naming team codes: see :func:`~tracker.formats.trf.records.team_records`), so an
    event opened from a file carries its teams wherever its opening event goes.  The board count is the
    ``352`` sequence's length (without it, the largest line-up in a match); the team round robin is double
    when the file says so (``092``/``192``) or has more rounds than one cycle needs.  Raises
    :class:`FormatError` for a team record that does not read.
    """
    found = team_records(tf.opened.records, path or tf.opened.tournament)
    if found is None:  # a file without team records may still open a team event (a PGN's team tags)
        return setup_of(tf.opened.teams) if isinstance(tf.opened.teams, Teams) else None
    n = len(found.teams)
    single = n - 1 if n % 2 == 0 else n
    last = max((getattr(e, "round", 0) or 0 for e in tf.events), default=0)
    cycles = 2 if tf.opened.format == "double" or last > single else 1
    return TeamSetup(
        teams=found.teams,
        boards=len(found.colours),
        colours=found.colours,
        scoring=found.scoring,
        rounds=max(single * cycles, last),
        cycles=cycles,
        tiebreaks=found.tiebreaks,
    )


def _check_teams(tf: TournamentFile, state: Tournament, path: str) -> None:
    """Refuse a team file whose teams name unknown players, or whose boards in a round face two teams."""
    setup = team_setup_of(tf, path)
    if setup is None:
        return
    team_of: dict[int, int] = {}
    for team in setup.teams:
        for player in team.players:
            if player not in state.index:
                raise FormatError(
                    path, 0, f"team {team.number} ({team.name}) lists player {player}, who has no 001 line"
                )
            team_of[state.index[player]] = team.number
    for i, entries in enumerate(state.entries):
        for r, e in entries.items():
            if not e.is_game:
                continue
            if i not in team_of or e.opponent not in team_of:
                who = state.start_nos[i] if i not in team_of else state.start_nos[e.opponent]
                raise FormatError(path, 0, f"round {r}: player {who} plays a board game but is in no team")
            if team_of[i] == team_of[e.opponent]:
                raise FormatError(
                    path,
                    0,
                    f"round {r}: players {state.start_nos[i]} and {state.start_nos[e.opponent]} "
                    f"of team {team_of[i]} play each other",
                )
    for team in setup.teams:
        faced: dict[int, set[int]] = {}
        for player in team.players:
            for r, e in state.entries[state.index[player]].items():
                if e.is_game:
                    faced.setdefault(r, set()).add(team_of[e.opponent])
        for r, opponents in sorted(faced.items()):
            if len(opponents) > 1:
                shown = " and ".join(str(o) for o in sorted(opponents))
                raise FormatError(path, 0, f"round {r}: the boards of team {team.number} face teams {shown}")
