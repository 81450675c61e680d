"""TRF16 and TRF26 tournament report files, in and out.

How this works
--------------

:func:`parse_trf` (:mod:`~tracker.formats.trf.read`) reads a file in three steps.

1. Every line is classified by its three-character record code.  ``001``
   player lines are cut by column (:mod:`~tracker.formats.trf.columns`);
   the other records are read or kept verbatim for the export
   (:mod:`~tracker.formats.trf.records`, which also describes tracker's own
   ``XXT``, ``XXN`` and ``XXW`` records).
2. The round blocks are paired up.  A game is on both players' lines and the
   two must agree: the opponents point at each other, the colours are
   opposite, and the two codes make one result.  Each game becomes one
   :class:`~tracker.core.events.ResultRecorded` seen from White's line; a
   block without an opponent becomes a :class:`~tracker.core.events.ByeRecorded`;
   an ``XXW`` record a :class:`~tracker.core.events.PlayerWithdrawn`.
3. The opening event and the events are checked against the wire schema and
   folded through the core, so a file that reads is a file the tracker
   accepts; last, each line's points column is compared with the folded
   score.

:func:`export_trf` (:mod:`~tracker.formats.trf.write`) writes the live state
so that it reads back as the same tournament.

Result codes (TRF16 = TRF26; letters case-insensitive)
------------------------------------------------------

==========================  ==========================================
White's / Black's codes     event
==========================  ==========================================
``1 0``, ``= =``, ``0 1``   ``1-0``, ``1/2-1/2``, ``0-1``
``W L``, ``D D``, ``L W``   the same with ``short=True`` (< 1 move)
``+ -``, ``- +``            forfeit ``+-`` / ``-+`` (opponent kept)
``- -``                     double forfeit ``--`` (a loss for both)
both blank                  see below
==========================  ==========================================

A game both lines leave blank is ambiguous: the specification (blank =
``Z``) and the FIDE TEC tie-break server read it as an unplayed game worth 0
— a withdrawal left in the file — while tracker's own export writes it for
games still to be played.  So: before the last round with results (a
game's result; byes are known as soon as a round is paired) it is an
unplayed game (a zero bye for each player: 0 points, not a game for
Koya, SB or direct encounter, which gives the server's values); in the last
round with results, and in later rounds that only list pairings, it is a
game still to come (no event), unless ``final=True`` (the event is over).
tracker's export lists with ``XXN`` the players whose blank is not entered
yet, wherever the rule above would read it as something recorded; the
reader honours it (unless ``final``).  The :class:`~tracker.formats.TournamentFile`'s
``notes`` say which reading was used.

With opponent ``0000`` (or four blanks) the block is a bye: ``H`` half,
``F`` full, ``U`` pairing-allocated, ``Z``, ``-`` or blank zero.  A bye
written with a game code is read by its points: ``1``/``W``/``+`` as a full
bye, ``=``/``D`` as a half bye, ``0``/``L`` as a zero bye.  A round with
nothing at all for a player (a blank block, or a line that ends earlier),
up to the last round anyone has a block for, is a zero bye, as the
specification says for a blank code.
"""

from __future__ import annotations

from tracker.formats.trf.read import parse_trf
from tracker.formats.trf.records import rules_of
from tracker.formats.trf.write import export_trf

__all__ = ["export_trf", "parse_trf", "rules_of"]
