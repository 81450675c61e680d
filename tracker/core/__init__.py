"""The pure core: events, crosstable, tie-breaks, standings, diff, projection.

Nothing in this package performs I/O, reads the clock or the environment, or
imports asyncio; an import-linter contract in pyproject.toml enforces it.
"""
