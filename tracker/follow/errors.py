"""What ``tracker follow`` reports when it cannot do something now; the follower retries."""

from __future__ import annotations

from tracker.core.errors import TrackerError


class FollowError(TrackerError):
    """Something ``tracker follow`` cannot do now; the message says what.  The follower retries."""


class SourceError(FollowError):
    """The source could not be read: HTTP error status, network failure, missing file."""


class BrokenRead(SourceError):
    """The source answered, but not with a whole PGN/TRF (cut in a game, an HTML error page): nothing of it is used."""
