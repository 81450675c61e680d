"""The one exception tree of tracker.

::

    TrackerError                    anything tracker raises on purpose
    ├── EventRejected               an event that must not change the state;
    │   │                           carries a machine-readable ``code`` and a
    │   │                           sentence for the arbiter
    │   ├── UnknownTournament       no tournament with that id is open
    │   ├── UnknownPlayer           a start number the tournament does not have
    │   └── InvalidPairing          paired twice in a round, not in the schedule,
    │                               a round out of range, a player against himself
    ├── DecodeError                 untrusted bytes that are not a valid message
    ├── FormatError                 a TRF or PGN file that cannot be read; names
    │                               the file, the line and the problem
    └── ProjectionUnavailable       the projection does not compute a tie-break
                                    of the tournament's order (STD, ARO, BPG)

The core raises; the shell decides what to do (reject the event with the
reason, close a misbehaving client, print the error and exit non-zero).
"""

from __future__ import annotations

from tracker.core.phrases import Said, render


class TrackerError(Exception):
    """Base class of every error tracker raises on purpose."""


class EventRejected(TrackerError):
    """The event is not valid against the current state; nothing was changed.

    ``code`` is a short stable token for machines (``"unknown-player"``),
    ``reason`` a sentence for people; given as a phrase said
    (:class:`~tracker.core.phrases.Said`), it is also ``said``, which a client
    renders in its viewer's language (``reason`` is then its English).
    """

    code: str = "rejected"

    def __init__(self, reason: str | Said, *, code: str | None = None) -> None:
        self.said = reason if isinstance(reason, Said) else None
        self.reason = render(reason, str) if isinstance(reason, Said) else reason
        super().__init__(self.reason)
        if code is not None:
            self.code = code


class UnknownTournament(EventRejected):
    code = "unknown-tournament"


class UnknownPlayer(EventRejected):
    code = "unknown-player"


class InvalidPairing(EventRejected):
    code = "invalid-pairing"


class DecodeError(TrackerError):
    """Bytes from outside that do not decode to a valid message or event."""


class FormatError(TrackerError):
    """A tournament file that cannot be read.

    The message always names the file, the line (1-based, 0 when the
    problem is not tied to one line) and the problem.
    """

    def __init__(self, path: str, line: int, problem: str) -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem


class ProjectionUnavailable(TrackerError):
    """The arbiter projection cannot rank under this tie-break order.

    Its search re-implements the ranking on integer arrays; the codes it does
    not re-implement (``STD``, ``ARO``, ``BPG``) make it refuse rather than
    answer with another order.
    """
