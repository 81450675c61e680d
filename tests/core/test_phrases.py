"""Sentences as data: a phrase said with arguments, written back in tracker's English."""

from __future__ import annotations

from fractions import Fraction

import msgspec
import pytest

from tracker.core.phrases import ENGLISH, PHRASES, Phrase, Said, fill, phrase, plural, points_value, render

NAMES = {1: "Caruana", 2: "So", 3: "Firouzja"}.__getitem__

_GAME = phrase("test.game", "{white:player}–{black:player} {result:result} (round {round})")
_GAMES = plural("test.games", "{n} game left", "{n} games left")
_LEAD = phrase("test.lead", "{who:players} share the lead")
_MOVE = phrase("test.move", "{who:player}'s KS {delta:signed}, now {now:points}")
_LINE = phrase("test.line", "{who:player} clinches {line:line}")


def test_a_phrase_said_travels_as_its_key_and_plain_arguments() -> None:
    said = _GAME(white=1, black=2, result="1/2-1/2", round=4)
    wire = msgspec.json.encode(said)
    assert wire == b'{"key":"test.game","args":{"white":1,"black":2,"result":"1/2-1/2","round":4}}'
    assert msgspec.json.decode(wire, type=Said) == said
    assert render(said, NAMES) == "Caruana–So ½–½ (round 4)"


def test_plural_forms_follow_the_count() -> None:
    assert render(_GAMES(n=1), NAMES) == "1 game left"
    assert render(_GAMES(n=0), NAMES) == "0 games left"
    assert render(_GAMES(n=12), NAMES) == "12 games left"


def test_lists_points_signs_and_lines_are_written_as_tracker_writes_them() -> None:
    assert render(_LEAD(who=[1, 2]), NAMES) == "Caruana and So share the lead"
    assert render(_LEAD(who=[1, 2, 3]), NAMES) == "Caruana, So and Firouzja share the lead"
    assert render(_MOVE(who=3, delta=0.5, now=points_value(29, 4)), NAMES) == "Firouzja's KS +½, now 7¼"
    assert render(_MOVE(who=3, delta=-1, now=points_value(4, 2)), NAMES) == "Firouzja's KS −1, now 2"
    assert render(_LINE(who=1, line=1), NAMES) == "Caruana clinches 1st"
    assert render(_LINE(who=1, line=3), NAMES) == "Caruana clinches top 3"
    assert render(_LINE(who=1, line="a Candidates place"), NAMES) == "Caruana clinches a Candidates place"


def test_points_on_the_wire_are_exact_for_the_values_chess_scores() -> None:
    for numerator, denominator in [(5, 2), (59, 4), (7, 1), (1, 3)]:
        value = points_value(numerator, denominator)
        assert ENGLISH.points(Fraction(value).limit_denominator(1 << 12)) == ENGLISH.points(
            Fraction(numerator, denominator)
        )
    assert points_value(6, 2) == 3 and isinstance(points_value(6, 2), int)


def test_a_missing_argument_or_an_unknown_type_is_an_error_not_a_blank() -> None:
    with pytest.raises(KeyError, match="argument 'black' missing"):
        render(_GAME(white=1, result="1-0", round=1), NAMES)
    with pytest.raises(ValueError, match="unknown argument type 'colour'"):
        phrase("test.bad", "{who:colour}")
    with pytest.raises(KeyError, match=r"no phrase .test\.nothing."):
        render(Said("test.nothing"), NAMES)
    with pytest.raises(TypeError, match="cannot be written as player"):
        fill("{who:player}", {"who": "So"}, NAMES, ENGLISH)


def test_a_key_is_defined_once() -> None:
    assert PHRASES["test.game"] is _GAME
    assert phrase("test.game", _GAME.english) == _GAME  # the same definition again is harmless (a reload)
    with pytest.raises(ValueError, match="defined twice"):
        phrase("test.game", "something else")
    assert isinstance(PHRASES["line.first"], Phrase)
