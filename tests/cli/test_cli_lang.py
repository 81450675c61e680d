"""The CLI in its user's language (issue 31): ``--lang``, else the locale's (``LANG``), else English.

``tracker standings FILE --lang ru`` writes its headings, notes and footers in Russian and its points as Russian
writes them (``2,5``), names as they are; English stays what it always was, byte for byte, and JSON (a contract)
never changes. Each test starts without a locale (tests/cli/conftest.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import data_file
from tests.web.english import english_left
from tracker.cli import main
from tracker.formats.files import read_file

SINQUEFIELD = str(data_file("sinquefield-cup-2021.trf"))
BYES = str(Path(__file__).parents[1] / "data" / "byes.trf")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def names_of(path: str) -> list[str]:
    tf = read_file(path)
    return [tf.opened.name, *(p.name for p in tf.opened.players)]


def test_standings_in_russian_has_russian_headings_points_and_no_english_word(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "standings", SINQUEFIELD, "--after-round", "8", "--lang", "ru", "--project")
    assert code == 0
    flat = " ".join(out.split())
    for word in ("Игрок", "Очки", "после 40 партий", "предварительные", "Прогноз", "Соперники"):
        assert word in flat, (word, out)
    assert "1-е*" in out and "2-е*" in out, "DE is a place, written the Russian way"
    assert "5,5" in out and "18,25" in out and "½" not in out.split("Прогноз")[0], "points as Russian writes them"
    assert "Vachier-Lagrave, Maxime" in out, "names untouched"
    assert english_left(out, "ru", names_of(SINQUEFIELD)) == []


@pytest.mark.parametrize(("code", "heading"), [("es", "Jugador"), ("de", "Spieler"), ("fr", "Joueur")])
def test_standings_in_each_language(capsys: pytest.CaptureFixture[str], code: str, heading: str) -> None:
    status, out, _ = run(capsys, "standings", SINQUEFIELD, "--after-round", "8", "--lang", code)
    assert status == 0 and heading in out
    assert "5,5" in out, "2,5 in every language but English"
    assert english_left(out, code, names_of(SINQUEFIELD)) == []


@pytest.mark.parametrize("after", ["3", "8", "9"])
def test_english_is_the_same_with_lang_en_without_a_locale_and_under_c(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, after: str
) -> None:
    _, plain, _ = run(capsys, "standings", SINQUEFIELD, "--after-round", after)
    _, asked, _ = run(capsys, "standings", SINQUEFIELD, "--after-round", after, "--lang", "en")
    monkeypatch.setenv("LANG", "C.UTF-8")
    _, c_locale, _ = run(capsys, "standings", SINQUEFIELD, "--after-round", after)
    monkeypatch.setenv("LANG", "ja_JP.UTF-8")  # a language tracker does not speak: English, no crash
    _, japanese, _ = run(capsys, "standings", SINQUEFIELD, "--after-round", after)
    assert plain == asked == c_locale == japanese
    head = " ".join(plain.split("┏")[0].split())
    if after == "8":
        assert head == "Sinquefield Cup 2021 — after 40 games (provisional, percentage basis, C.07 2026)", head
        assert "1st*" in plain and "5½" in plain and "18¼" in plain
        flat = " ".join(plain.split())
        assert "DE: the place among the players tied on everything before it (1st best) (* the tied" in flat


def test_lang_follows_the_locale_and_lang_wins(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, english, _ = run(capsys, "standings", SINQUEFIELD)
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    _, german, _ = run(capsys, "standings", SINQUEFIELD)
    assert "Spieler" in german and german != english
    _, asked, _ = run(capsys, "standings", SINQUEFIELD, "--lang", "en")
    assert asked == english, "--lang wins over LANG"
    monkeypatch.setenv("LC_ALL", "fr_FR.UTF-8")  # LC_ALL before LANG, as for every program
    _, french, _ = run(capsys, "standings", SINQUEFIELD)
    assert "Joueur" in french
    _, russian, _ = run(capsys, "standings", SINQUEFIELD, "--lang", "ru_RU.UTF-8")
    assert "Игрок" in russian


def test_a_language_tracker_does_not_speak_is_refused_naming_the_ones_it_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["standings", SINQUEFIELD, "--lang", "xx"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--lang" in err and "tracker does not speak 'xx': choose one of en, ru, es, de, fr" in err, err


def test_json_is_the_same_in_every_language(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, english, _ = run(capsys, "standings", SINQUEFIELD, "--after-round", "8", "--format", "json")
    _, russian, _ = run(capsys, "standings", SINQUEFIELD, "--after-round", "8", "--format", "json", "--lang", "ru")
    monkeypatch.setenv("LANG", "fr_FR.UTF-8")
    _, french, _ = run(capsys, "standings", SINQUEFIELD, "--after-round", "8", "--format", "json")
    assert english == russian == french
    assert json.loads(english)["notes"][0].startswith("DE is provisional")


def test_check_says_its_verdict_in_the_language(capsys: pytest.CaptureFixture[str]) -> None:
    code, english, _ = run(capsys, "check", BYES)
    assert code == 0 and "the official standings agree" in english
    code, russian, _ = run(capsys, "check", BYES, "--lang", "ru")
    assert code == 0 and "официальная таблица совпадает" in russian
    assert english_left(russian, "ru", [*names_of(BYES), BYES]) == [], "the file's name aside"
    _, spanish, _ = run(capsys, "check", BYES, "--lang", "es")
    assert "la clasificación oficial coincide" in spanish


def test_the_clis_own_errors_are_said_in_the_language(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "standings", SINQUEFIELD, "--lines", "x", "--lang", "de")
    assert code == 1 and "--lines erwartet durch Kommas getrennte Plätze" in err, err
    code, _, err = run(capsys, "standings", SINQUEFIELD, "--lines", "x")
    assert code == 1 and "--lines takes places separated by commas, e.g. 1,3, not 'x'" in err, err
