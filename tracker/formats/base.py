"""What the TRF and PGN readers share: :class:`TournamentFile`, ids and the checks of a file's text.

Apart from :mod:`tracker.formats` (which re-exports all of it) so that the
readers import this module, not the package that imports them: no import circle.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace

from tracker.core.apply import Batch, fold
from tracker.core.audit import Official
from tracker.core.crosstable import Tournament
from tracker.core.errors import DecodeError, EventRejected, FormatError
from tracker.core.events import Event, PlayerWithdrawn, TournamentOpened, decode_event, encode_event
from tracker.core.phrases import Said, render


@dataclass(frozen=True, slots=True)
class TournamentFile:
    """A tournament read from a file: how to open it and what happened in it.

    ``notes`` are sentences for the user about how the reader read what the
    file leaves open (a blank result, a column alignment, an encoding);
    the CLI prints them.  ``official`` is what a TRF publishes about each
    player: the rank column and, from ``XXT`` records, tie-break values
    (empty for PGN); ``tracker check`` compares them with tracker's.  They
    are claims about the tournament, not part of it: two files with the same
    tournament compare equal whatever they claim.
    """

    opened: TournamentOpened
    events: tuple[Event, ...]
    notes: tuple[str, ...] = ()
    official: tuple[Official, ...] = field(default=(), compare=False)
    #: the notes as phrases, in the same order (the CLI says them in its language; ``notes`` are their English)
    said: tuple[Said, ...] = field(default=(), compare=False)

    def until_round(self, last: int) -> TournamentFile:
        """The same file cut after round ``last`` (events of later rounds dropped).

        A withdrawal is kept when it gives no round or when the player no
        longer plays round ``last + 1``: after round ``last`` they were gone.
        """
        kept = tuple(e for e in self.events if (getattr(e, "round", 0) or 0) <= last + isinstance(e, PlayerWithdrawn))
        return replace(self, events=kept, official=())  # the published figures are for the whole file


def slug(name: str) -> str:
    """A tournament id from an event name: ``"Sinquefield Cup 2021"`` → ``"sinquefield-cup-2021"``."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    text = re.sub(r"[^A-Za-z0-9]+", "-", ascii_name).strip("-").lower()
    return text[:64].strip("-") or "tournament"


def state_from(tf: TournamentFile) -> Tournament:
    """Fold the file's opening event and all its events into a fresh tournament.

    Returns the crosstable as the core keeps it, folded in one batch (the
    sums computed once, no standings or diffs per event: O(entries)).
    Readers have already checked their events against the core, so this
    only raises :class:`~tracker.core.errors.EventRejected` for a
    :class:`TournamentFile` built or edited by hand.
    """
    state = fold((tf.opened, *tf.events))
    assert state is not None  # the opening event makes a tournament
    return state


# -- shared by the readers ----------------------------------------------------------------

_TOURNAMENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def file_stem(path: str) -> str:
    """The file's name without folders and extension: ``"data/held.trf"`` → ``"held"``."""
    base = re.split(r"[\\/]", path)[-1]
    stem, dot, _ = base.rpartition(".")
    return stem if dot and stem else base


def tournament_id_for(path: str, name: str | None, tournament_id: str | None) -> str:
    """The id a reader gives the tournament: the caller's, else a slug of the event name, else of the file name.

    Raises :class:`FormatError` when the caller's id is not a valid tournament id.
    """
    if tournament_id is not None:
        if not _TOURNAMENT_ID.fullmatch(tournament_id):
            raise FormatError(path, 0, f"invalid tournament id {tournament_id!r} (letters, digits, . _ -; at most 64)")
        return tournament_id
    return slug(name) if name else slug(file_stem(path))


_BAD_CHARACTER = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def check_characters(text: str, path: str) -> None:
    """Refuse binary junk: control characters (other than tab and line ends) and unpaired surrogates.

    Raises :class:`FormatError` naming the line of the first such character.
    """
    bad = _BAD_CHARACTER.search(text)
    if bad is not None:
        line = text.count("\n", 0, bad.start()) + 1
        raise FormatError(path, line, f"not a text file: character U+{ord(bad.group()):04X}")


def game_id(tournament: str, round_: int, white: int, black: int) -> str:
    """The deterministic id of a game read from a file, e.g. ``"held/r4/5-6"``."""
    return f"{tournament}/r{round_}/{white}-{black}"


def bye_id(tournament: str, round_: int, player: int) -> str:
    """The deterministic id of a bye read from a file, e.g. ``"held/r1/bye/3"``."""
    return f"{tournament}/r{round_}/bye/{player}"


def checked_file(
    path: str, opened: TournamentOpened, events: list[Event], lines: dict[str, int], notes: tuple[Said, ...] = ()
) -> tuple[TournamentFile, Tournament]:
    """Validate a reader's result against the wire schema and the core, all or nothing.

    ``lines`` maps event ids to the line they came from (for messages).
    Returns the file and the folded state (for checks only the state can
    answer, such as TRF's points column).  Raises :class:`FormatError` for a
    field out of range (as :func:`~tracker.core.events.decode_event` would
    reject it) or an event the core rejects.
    """
    for event in (opened, *events):
        try:
            decode_event(encode_event(event))
        except DecodeError as exc:
            raise FormatError(path, lines.get(event.id, 0), str(exc)) from None
    batch = Batch()
    for event in (opened, *events):
        try:
            batch.fold(event)
        except EventRejected as exc:
            raise FormatError(path, lines.get(event.id, 0), exc.reason) from None
    state = batch.finish()
    assert state is not None  # the opening event makes a tournament
    return TournamentFile(opened, tuple(events), tuple(render(n, str) for n in notes), said=notes), state
