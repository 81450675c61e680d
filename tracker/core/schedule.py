"""The shape of a round robin's schedule: how many rounds it needs.

The crosstable (which rounds a tournament has) and the checks (whether an
opening event's rounds suffice) both read it, so it sits below both.
"""

from __future__ import annotations


def rounds_needed(n: int, cycles: int) -> int:
    """Rounds a round robin of ``n`` players needs: n − 1 per cycle, n when n is odd."""
    return (n - 1 if n % 2 == 0 else n) * cycles
