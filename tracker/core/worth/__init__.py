"""What a result is worth to a player, beside the tie-breaks: rating change, prize money (and, later, norms).

The modules, each pure like the rest of the core:

* :mod:`~tracker.core.worth.tables` — FIDE B.02's two conversion tables (8.1(a): a fractional score to a
  rating difference; 8.1(b): a rating difference to an expected score), as exact values;
* :mod:`~tracker.core.worth.rating` — each rated player's rating change over the rated games played so far
  (B.02 §8.3: K, the 400-point rule and its one upgrade per tournament) and the performance rating;
* :mod:`~tracker.core.worth.prizes` — place prizes shared as ``none``, ``average`` or ``hort``: each player's
  money in the standings as they are, and the least and most still possible over the remaining games, each
  with a scenario that pays it.
* :mod:`~tracker.core.worth.categories` — prize categories (rating band, women, juniors): the rule each
  declares and whom it admits; :mod:`~tracker.core.worth.prizes` pays them beside the places, one prize per
  player.

Nothing here is imported by this package itself: :mod:`tracker.core.tiebreaks` reads the tables for ``TPR``
and the rating module reads the tie-break table, so importing the modules one by one keeps the two apart.
"""
