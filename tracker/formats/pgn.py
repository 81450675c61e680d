"""PGN game collections (a broadcast's games file) read as a round robin.

How this works
--------------

Only the tags are read (:func:`chess.pgn.read_headers` skips the moves, so a
whole event's PGN reads in milliseconds): ``Event`` names the tournament,
``Round`` gives the round (``"3"`` and ``"3.1"`` — round 3, board 1 — are
both round 3), ``White``/``Black`` the players and ``Result`` the result
(``1-0``, ``0-1``, ``1/2-1/2``; ``*`` is a game not finished yet and
records nothing).  A player is identified by the name exactly as written.

PGN has no start list, so start numbers are given **by alphabetical order of
the names** (case-insensitive; 1 = first): the same file always gives the
same numbers, whatever the order of its games.  ``WhiteElo``/``BlackElo``
give the rating, ``WhiteTitle``/``BlackTitle`` the title and
``WhiteFideId``/``BlackFideId`` the FIDE id (the first valid value seen).
The format is double when some pair meets twice (unfinished games count) or
a round number is beyond what a single round robin needs; PGN has no byes,
so the free round of an odd round robin records nothing.

A team event's PGN (a broadcast of a team round robin) carries ``WhiteTeam``
and ``BlackTeam`` on every game: the file is then a team event.  Teams are
numbered by alphabetical order of their names, as players are; a team's
players stand in board order (the ``Board`` tag, else the ``Round`` tag's
second number — ``"3.2"``: board 2 — else the order they first appear in);
the schedule is the boards the file pairs (unfinished games included), as a
team TRF's is.  A player in two teams, a game between two players of one
team, or a game without the tags in a file whose other games have them is
refused with its line.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import msgspec

from tracker.core.errors import FormatError
from tracker.core.events import Event, Format, GameResult, Player, ResultRecorded, TeamEntry, Teams, TournamentOpened
from tracker.core.schedule import rounds_needed
from tracker.formats.base import TournamentFile, check_characters, checked_file, file_stem, game_id, tournament_id_for

if TYPE_CHECKING:
    import chess.pgn

_RESULTS: Final[dict[str, GameResult | None]] = {"1-0": "1-0", "0-1": "0-1", "1/2-1/2": "1/2-1/2", "*": None}
_ROUND: Final = re.compile(r"\s*([0-9]{1,3})(?:\.[0-9]+)*\s*")
_SUB_ROUND: Final = re.compile(r"\s*[0-9]{1,3}\.([0-9]{1,3})(?:\.[0-9]+)*\s*")
_BOARD: Final = re.compile(r"\s*([0-9]{1,3})\s*")
_ELO: Final = re.compile(r"\s*([0-9]{1,4})\s*")
_FIDE_ID: Final = re.compile(r"\s*([0-9]{1,11})\s*")
_UNKNOWN: Final = frozenset(("", "?", "-"))
_MAX_PLAYERS: Final = 500


@dataclass(frozen=True, slots=True)
class _Game:
    line: int
    round: int
    white: str
    black: str
    result: GameResult | None
    white_team: str = ""
    black_team: str = ""
    board: int = 0


@dataclass(slots=True)
class _Details:
    rating: int = 0
    title: str = ""
    fide_id: str = ""
    fide_line: int = 0
    team: str = ""
    team_line: int = 0


def parse_pgn(text: str, path: str, tournament_id: str | None = None) -> TournamentFile:
    """Read a PGN file's text (tags only) into a round robin's opening event and its results.

    Returns a :class:`TournamentFile`: the opening event (players numbered
    alphabetically, format inferred, rounds = the last round or what the
    round robin needs, default scoring and tie-breaks) and one
    :class:`ResultRecorded` per finished game, by round and then White's
    start number, with ids ``{id}/r{round}/{white}-{black}``.  The
    tournament id is ``tournament_id``, else a slug of the ``Event`` tag,
    else of the file name.

    Raises :class:`FormatError` (path, line of the game's first tag,
    problem) for binary junk, a file without games, a game without
    ``White``, ``Black``, a numeric ``Round`` or a valid ``Result``, games
    of more than one event, a player against himself, one FIDE id for two
    names (or two for one), a pair meeting more than twice, fewer than two
    or more than 500 players, team tags that do not make teams (see the
    module docstring), and anything the core rejects (a player in two games
    of one round, a pair meeting twice in one cycle).
    """
    check_characters(text, path)
    text = text.removeprefix("\ufeff")
    event_name, games, details = _read(text, path)
    if not games:
        raise FormatError(path, 0, 'no games (a PGN game starts with tags such as [White "..."])')
    names = sorted({g.white for g in games} | {g.black for g in games}, key=lambda s: (s.casefold(), s))
    if len(names) < 2:
        raise FormatError(path, games[0].line, "a round robin needs at least 2 players")
    if len(names) > _MAX_PLAYERS:
        raise FormatError(path, 0, f"more than {_MAX_PLAYERS} players")
    number = {name: k for k, name in enumerate(names, start=1)}
    _check_fide_ids(details, path)

    meetings = Counter(frozenset((g.white, g.black)) for g in games)
    pair, most = meetings.most_common(1)[0]
    if most > 2:
        line = [g.line for g in games if frozenset((g.white, g.black)) == pair][2]
        raise FormatError(path, line, f"{' and '.join(sorted(pair))} meet {most} times; tracker reads single or double")
    n = len(names)
    single = n - 1 if n % 2 == 0 else n
    last = max(g.round for g in games)
    fmt: Format = "double" if most == 2 or last > single else "single"
    rounds = max(last, single * (2 if fmt == "double" else 1))

    teams = _teams_of(games, details, number, path)
    tid = tournament_id_for(path, event_name, tournament_id)
    players = tuple(
        Player(
            start_no=number[name],
            name=name,
            rating=details[name].rating,
            title=details[name].title,
            fide_id=details[name].fide_id,
        )
        for name in names
    )
    opened = TournamentOpened(
        id=f"{tid}/opened",
        tournament=tid,
        name=event_name or file_stem(path)[:200],
        players=players,
        format=fmt,
        rounds=rounds,
        schedule=None if teams is None else _paired(games, number, last),
        teams=msgspec.UNSET if teams is None else teams,
    )
    events: list[Event] = []
    where: dict[str, int] = {}
    seen: dict[tuple[int, int, int], int] = {}
    for g in sorted(games, key=lambda g: (g.round, number[g.white], g.line)):
        white, black = number[g.white], number[g.black]
        key = (g.round, min(white, black), max(white, black))
        if key in seen:
            raise FormatError(
                path, g.line, f"round {g.round}: {g.white}–{g.black} is already the game on line {seen[key]}"
            )
        seen[key] = g.line
        if g.result is None:
            continue
        event = ResultRecorded(
            id=game_id(tid, g.round, white, black),
            tournament=tid,
            round=g.round,
            white=white,
            black=black,
            result=g.result,
        )
        events.append(event)
        where[event.id] = g.line
    tf, _ = checked_file(path, opened, events, where)
    return tf


def round_of(text: str) -> int | None:
    """The round of a ``Round`` tag (``"3"`` and ``"3.1"``: 3), ``None`` when it is not one (1-999)."""
    match = _ROUND.fullmatch(text)
    if match is None or not 1 <= int(match.group(1)) <= 999:
        return None
    return int(match.group(1))


def _read(text: str, path: str) -> tuple[str | None, list[_Game], dict[str, _Details]]:
    """The event name, the games and what the tags say about each player."""
    import chess.pgn  # at the first PGN read, not with every command (see tracker.formats.fen)

    handle = io.StringIO(text)
    games: list[_Game] = []
    details: dict[str, _Details] = {}
    event_name: str | None = None
    event_line = 0
    while True:
        offset = handle.tell()
        try:
            headers = chess.pgn.read_headers(handle)
        except Exception as exc:  # python-chess is lenient, but untrusted text must surface only as FormatError
            raise FormatError(path, _line_at(text, offset), f"unreadable PGN: {exc}") from None
        if headers is None:
            break
        line = _line_at(text, offset)
        if not any(key in headers for key in ("White", "Black", "Result", "Round", "Event")):
            raise FormatError(path, line, "a game without tags (White, Black, Round, Result)")
        white = _required(headers.get("White"), "White", path, line)
        black = _required(headers.get("Black"), "Black", path, line)
        if white == black:
            raise FormatError(path, line, f"{white} cannot play himself")
        for name in (white, black):
            if len(name) > 200:
                raise FormatError(path, line, "a player name longer than 200 characters")
        round_text = headers.get("Round", "")
        number = round_of(round_text)
        if number is None:
            raise FormatError(path, line, f"Round {round_text!r} is not a round number (1-999, e.g. '3' or '3.1')")
        result_text = headers.get("Result", "")
        if result_text.strip() not in _RESULTS:
            raise FormatError(path, line, f"Result {result_text!r} is not 1-0, 0-1, 1/2-1/2 or *")
        name = (headers.get("Event") or "").strip()
        if name not in _UNKNOWN:
            if len(name) > 200:
                raise FormatError(path, line, "the Event name is longer than 200 characters")
            if event_name is None:
                event_name, event_line = name, line
            elif name != event_name:
                raise FormatError(
                    path, line, f"a game of {name!r}, but line {event_line} starts a game of {event_name!r}"
                )
        white_team, black_team = (" ".join(headers.get(tag, "").split()) for tag in ("WhiteTeam", "BlackTeam"))
        if max(len(white_team), len(black_team)) > 200:
            raise FormatError(path, line, "a team name longer than 200 characters")
        board = _BOARD.fullmatch(headers.get("Board", "")) or _SUB_ROUND.fullmatch(round_text)
        result = _RESULTS[result_text.strip()]
        games.append(
            _Game(line, number, white, black, result, white_team, black_team, int(board.group(1)) if board else 0)
        )
        for colour, player in (("White", white), ("Black", black)):
            _note(details.setdefault(player, _Details()), headers, colour, line)
    return event_name, games, details


def _teams_of(games: list[_Game], details: dict[str, _Details], number: dict[str, int], path: str) -> Teams | None:
    """The teams the ``WhiteTeam``/``BlackTeam`` tags make (``None`` when no game has them): numbered by name,
    players in board order; raises :class:`FormatError` for tags that do not make teams."""
    tagged = [g for g in games if g.white_team or g.black_team]
    if not tagged:
        return None
    for g in games:
        if not (g.white_team and g.black_team):
            missing = "BlackTeam" if g.white_team else "WhiteTeam"
            raise FormatError(path, g.line, f"a game without a {missing} tag, but line {tagged[0].line} names teams")
        if g.white_team.casefold() == g.black_team.casefold():
            raise FormatError(path, g.line, f"{g.white} and {g.black} are both of {g.white_team}: a board is two teams")
    seen: dict[str, tuple[int, int]] = {}  # player → (board, line) where first seen, for the board order
    for g in games:
        for player, team in ((g.white, g.white_team), (g.black, g.black_team)):
            d = details[player]
            if not d.team:
                d.team, d.team_line = team, g.line
            elif d.team.casefold() != team.casefold():
                raise FormatError(
                    path, g.line, f"{player} plays for {team} here but for {d.team} on line {d.team_line}"
                )
            board, line = seen.get(player, (0, g.line))
            if g.board and (not board or g.board < board):
                board = g.board
            seen[player] = (board, line)
    spelled: dict[str, str] = {}  # one spelling per team (the first), whatever the case
    members: dict[str, list[str]] = {}
    for player, d in sorted(details.items(), key=lambda item: item[1].team_line):
        name = spelled.setdefault(d.team.casefold(), d.team)
        members.setdefault(name, []).append(player)
    if len(members) < 2:
        raise FormatError(path, tagged[0].line, "a team event needs at least 2 teams")
    entries = []
    for k, team in enumerate(sorted(members, key=lambda t: (t.casefold(), t)), start=1):
        order = sorted(members[team], key=lambda p: (seen[p][0] == 0, seen[p][0], seen[p][1]))
        entries.append(TeamEntry(number=k, name=team, players=tuple(number[p] for p in order)))
    rounds_of: dict[frozenset[str], set[int]] = {}  # the rounds each pair of teams meets in
    for g in games:
        rounds_of.setdefault(frozenset((g.white_team.casefold(), g.black_team.casefold())), set()).add(g.round)
    twice = any(len(rounds) > 1 for rounds in rounds_of.values())
    last = max(g.round for g in games)
    cycles = 2 if twice or last > rounds_needed(len(entries), 1) else 1
    return Teams(teams=tuple(entries), rounds=max(last, rounds_needed(len(entries), cycles)), cycles=cycles)


def _paired(games: list[_Game], number: dict[str, int], last: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The board pairings the file gives per round, unfinished games included (a team event's schedule)."""
    by_round: dict[int, list[tuple[int, int]]] = {}
    for g in games:
        by_round.setdefault(g.round, []).append((number[g.white], number[g.black]))
    return tuple(tuple(sorted(by_round.get(r, ()))) for r in range(1, last + 1))


def _note(d: _Details, headers: chess.pgn.Headers, colour: str, line: int) -> None:
    """Keep the first valid rating, title and FIDE id seen for a player (junk values are ignored)."""
    elo = _ELO.fullmatch(headers.get(f"{colour}Elo", ""))
    if not d.rating and elo is not None and 0 < int(elo.group(1)) <= 4000:
        d.rating = int(elo.group(1))
    title = headers.get(f"{colour}Title", "").strip().upper()
    if not d.title and 0 < len(title) <= 3 and title.isalpha():
        d.title = title
    fide = _FIDE_ID.fullmatch(headers.get(f"{colour}FideId", ""))
    if fide is not None and fide.group(1).strip("0"):
        if not d.fide_id:
            d.fide_id, d.fide_line = fide.group(1), line
        elif d.fide_id != fide.group(1):
            d.fide_line = -line  # two ids for one name: reported by _check_fide_ids


def _check_fide_ids(details: dict[str, _Details], path: str) -> None:
    owner: dict[str, str] = {}
    for name, d in sorted(details.items(), key=lambda item: abs(item[1].fide_line)):
        if d.fide_line < 0:
            raise FormatError(path, -d.fide_line, f"{name} has two FIDE ids")
        if d.fide_id:
            other = owner.setdefault(d.fide_id, name)
            if other != name:
                raise FormatError(path, d.fide_line, f"FIDE id {d.fide_id} belongs to both {other!r} and {name!r}")


def _required(value: str | None, tag: str, path: str, line: int) -> str:
    text = (value or "").strip()
    if text in _UNKNOWN:
        raise FormatError(path, line, f"a game without a {tag} player")
    return text


def _line_at(text: str, offset: int) -> int:
    """The line of the first tag at or after character ``offset``."""
    start = text.find("[", offset)
    return text.count("\n", 0, start if start >= 0 else offset) + 1


__all__ = ["parse_pgn"]
