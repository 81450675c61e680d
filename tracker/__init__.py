"""tracker: live Koya tie-breaks for round-robin chess events."""

__version__ = "0.1.0"
