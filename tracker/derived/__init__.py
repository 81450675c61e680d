"""Derived work: what is computed from a tournament's state beside the standings, off the delivery path.

The gateway (:mod:`tracker.gateway`) delivers; this package computes, on a few
worker processes, what arbiters and spectators ask for beyond the standings:

- :mod:`~tracker.derived.workers` — one worker process, bounded in time and memory;
- :mod:`~tracker.derived.pool` — the shared pool of them: one slot per tournament, priced, tiered;
- :mod:`~tracker.derived.search` — one search per seq answers the arbiters' projection and the spectators'
  stakes, starting from the last seq's memory;
- :mod:`~tracker.derived.arbiters` — the arbiters' projections (bounds first, then exact);
- :mod:`~tracker.derived.stakes` — the stakes, chances and cues feed for subscribers who ask;
- :mod:`~tracker.derived.boards` — live boards and the standings if the games ended now.
"""
