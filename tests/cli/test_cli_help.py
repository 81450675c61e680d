"""``--help`` in the CLI's language (issue 38): ``tracker --help`` and every command's, in en, de, es, fr and ru.

Reproduction: ``tracker check --lang ru --help`` and ``LANG=ru_RU.UTF-8 tracker standings --help`` printed
English (the options' help, argparse's "usage:", "options", "show this help message and exit"), while the same
commands without ``--help`` spoke Russian.

The English help is the documentation users know: ``data/help-en.txt`` holds it as it was before the help went
through the catalogues, and it must stay so, word for word (``python -m tests.cli.test_cli_help`` writes it
again when an option is added on purpose).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.web.english import english_left
from tracker.cli import main, parser
from tracker.cli.parsers import ARGPARSE, Parser
from tracker.cli.words import argv_language
from tracker.i18n import LANGUAGES, language

ENGLISH_HELP = Path(__file__).parent / "data" / "help-en.txt"
WIDTH = "100"  # argparse wraps at the terminal's width ($COLUMNS)


def commands() -> list[str]:
    """Every command of ``tracker``, in the order its help lists them."""
    found = parser()._subparsers
    assert found is not None
    (sub,) = found._group_actions
    return list(sub.choices)


def help_of(argv: Sequence[str]) -> str:
    """What ``tracker ARGV --help`` prints (it exits 0)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    return out.getvalue()


def every_help() -> Iterator[str]:
    """``tracker --help`` and each command's ``--help``, each after a ``$ tracker … --help`` line."""
    for argv in ([], *([c] for c in commands())):
        yield f"$ tracker {' '.join([*argv, '--help'])}\n{help_of(argv)}"


def texts(p: argparse.ArgumentParser) -> dict[str, str]:
    """Every text a parser's help shows and the code wrote, by where it is: ``tracker standings --final``,
    ``tracker standings <title 2>``, ``tracker <description>``, ``tracker check`` (a command's line in
    ``tracker --help``), for the parser and each of its commands'."""
    found: dict[str, str] = {}
    if p.description:
        found[f"{p.prog} <description>"] = p.description
    for i, group in enumerate(p._action_groups):
        if group.title:
            found[f"{p.prog} <title {i}>"] = group.title
    for action in p._actions:
        if action.help is not None and action.help != argparse.SUPPRESS:
            found[f"{p.prog} {'/'.join(action.option_strings) or action.dest}"] = action.help
        if isinstance(action, argparse._SubParsersAction):
            for line in action._get_subactions():
                assert line.help is not None
                found[f"{p.prog} {line.dest}"] = line.help
            for command in action.choices.values():
                found |= texts(command)
    return found


#: Texts that are the same in a language as in English by nature: a URL form, and French's word for options.
SAME_BY_NATURE = {
    ("de", "tracker worker --broker"),  # kafka://HOST:PORT
    ("de", "tracker gateway --broker"),
    ("es", "tracker worker --broker"),
    ("es", "tracker gateway --broker"),
    ("fr", "tracker worker --broker"),
    ("fr", "tracker gateway --broker"),
    ("ru", "tracker worker --broker"),
    ("ru", "tracker gateway --broker"),
    *(("fr", f"{prog} <title 1>") for prog in ("tracker", *(f"tracker {c}" for c in ("standings", "check", "new",
      "up", "replay", "follow", "worker", "gateway", "cluster")))),  # "options"
}  # fmt: skip


@pytest.mark.parametrize("code", LANGUAGES[1:])
def test_every_help_of_every_command_is_in_the_language(code: str) -> None:
    english = texts(parser())
    spoken = texts(parser(language(code)))
    assert spoken.keys() == english.keys()
    assert len(english) > 150, "every command's options, titles and lines are walked"
    same = {where for where in english if spoken[where] == english[where]}
    assert same == {where for c, where in SAME_BY_NATURE if c == code}, sorted(same)


def test_every_command_has_the_help_and_the_options_it_had() -> None:
    walked = texts(parser())
    for command in commands():
        assert f"tracker {command}" in walked, "its line in tracker --help"
        assert walked[f"tracker {command} -h/--help"] == "show this help message and exit"
    assert walked["tracker <title 0>"] == "positional arguments" and walked["tracker <title 1>"] == "options"
    assert walked["tracker follow --engine"].endswith("gives no [%%eval] for"), "argparse writes it [%eval]"


def run_help(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> str:
    text = help_of(argv)
    capsys.readouterr()
    return " ".join(text.split())


def prose(text: str) -> str:
    """A help without its option names (``--after-round``) and choices (``{table,json}``), written as they are."""
    return re.sub(r"\{[^}]*\}|--?[\w-]+", " ", text)


def test_check_help_in_russian(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", WIDTH)
    text = run_help(["check", "--lang", "ru"], capsys)
    assert text.startswith("использование: tracker check [-h] [--rules {2024,2026}]"), text
    for words in (
        "позиционные аргументы: file",
        "параметры: -h, --help показать эту справку и выйти",
        "--final турнир окончен: партия с парой, но без результата, не сыграна",
        "--tiebreaks CODES порядок турнира, если файл его не называет (202/212)",
        "--lang CODE язык таблиц и сообщений",
    ):
        assert words in text, (words, text)
    assert english_left(prose(text), "ru", ["check", "file"]) == [], text


def test_standings_help_follows_lang_in_german(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command the issue names, as a user runs it: a new process, its language from ``LANG`` alone."""
    env = {**os.environ, "LANG": "de_DE.UTF-8", "COLUMNS": WIDTH}
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-m", "tracker.cli", "standings", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert text.startswith("Aufruf: tracker standings [-h] [--after-round N]"), text
    for words in (
        "Positionsargumente: file",
        "Optionen: -h, --help diese Hilfe anzeigen und beenden",
        "--after-round N die Tabelle nach Runde N (0: vor Runde 1)",
        "none (die Feinwertungen entscheiden), average, hort (je zur Hälfte;",
    ):
        assert words in text, (words, text)
    choices = ["standings", "file", "games", "rounds", "percentage", "table", "none", "average", "hort"]  # as they are
    assert english_left(prose(text), "de", choices) == [], text


@pytest.mark.parametrize("code", LANGUAGES)
def test_tracker_help_lists_the_commands_in_the_language(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = run_help(["--lang", code], capsys)
    lang = language(code)
    assert texts(parser(lang))["tracker standings"] in text
    assert text == run_help([f"--lang={code}"], capsys) == " ".join(help_of(["--help", "--lang", code]).split())


def test_english_help_is_what_it_was_word_for_word(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", WIDTH)
    assert "\n".join(every_help()) == ENGLISH_HELP.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--lang", "ru"], "ru"),
        (["standings", "f.trf", "--lang=es"], "es"),
        (["standings", "--lang", "fr", "f.trf", "--lang", "de"], "de"),  # the last one, as argparse reads it
        (["standings", "--lang", "xx"], "en"),  # refused by the parser, in the environment's language
        (["standings", "--", "--lang", "ru"], "en"),  # after --, a file name
        (["standings", "--lang"], "en"),
        (["standings", "f.trf"], "en"),
    ],
)
def test_the_language_is_chosen_from_argv_before_the_parser(argv: list[str], expected: str) -> None:
    assert argv_language(argv, {}).code == expected
    assert argv_language(["standings"], {"LANG": "ru_RU.UTF-8"}).code == "ru"
    assert argv_language(["standings", "--lang", "en"], {"LANG": "ru_RU.UTF-8"}).code == "en"


#: A command line that makes argparse say each of its sentences tracker translates (cli.argparse.argument in all).
PROVOKED = {
    "cli.argparse.invalid_choice": ["standings", "f.trf", "--format", "html"],
    "cli.argparse.invalid_value": ["follow", "f.pgn", "--tournament", "t", "--engine-nodes", "many"],
    "cli.argparse.required": ["standings"],
    "cli.argparse.unrecognized": ["standings", "f.trf", "--colour"],
    "cli.argparse.expected_one": ["follow", "f.pgn", "--tournament"],
    "cli.argparse.ignored": ["follow", "f.pgn", "--tournament", "t", "--once=yes"],
    "cli.argparse.ambiguous": ["standings", "f.trf", "--pr"],
}


def refusal(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The last line ``tracker ARGV`` writes on stderr as it refuses the command line (status 2)."""
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    assert exit_.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_every_sentence_of_argparse_tracker_translates_is_provoked() -> None:
    assert set(PROVOKED) == {p.key for p in ARGPARSE} - {"cli.argparse.argument"}


@pytest.mark.parametrize("key", sorted(PROVOKED))
def test_argparse_refusals_are_said_in_the_language(key: str, capsys: pytest.CaptureFixture[str]) -> None:
    english = refusal(PROVOKED[key], capsys)
    assert english.startswith("tracker") and ": error: " in english, english
    for code in LANGUAGES[1:]:
        spoken = refusal([*PROVOKED[key], "--lang", code], capsys)
        template = language(code).messages[key][0]
        for piece in re.split(r"\{\w+\}", template):
            assert piece.strip() in spoken, (code, piece, spoken)
        assert "error" not in spoken or code == "es", spoken


def test_english_refusals_are_argparse_own(capsys: pytest.CaptureFixture[str]) -> None:
    assert refusal(PROVOKED["cli.argparse.invalid_choice"], capsys) == (
        "tracker standings: error: argument --format: invalid choice: 'html' (choose from 'table', 'json', 'trf')"
    )
    assert refusal(["standings"], capsys) == "tracker standings: error: the following arguments are required: file"
    assert refusal(["standings", "f.trf", "--after-round", "x"], capsys) == (
        "tracker standings: error: argument --after-round: 'x' is not a round number"
    )


def test_tracker_own_refusals_are_said_in_the_language(capsys: pytest.CaptureFixture[str]) -> None:
    assert refusal(["standings", "f.trf", "--after-round", "-1", "--lang", "fr"], capsys) == (
        "tracker standings : erreur : argument --after-round : un numéro de ronde vaut 0 (avant la ronde 1) ou plus, "
        "pas -1"
    )
    assert refusal(["gateway", "--broker", "kafka://k:9092", "--processes", "0", "--lang", "de"], capsys) == (
        "tracker gateway: Fehler: Argument --processes: ein Gateway läuft mit mindestens 1 Prozess, nicht 0"
    )
    assert refusal(["worker", "--broker", "kafka://k:9092", "--kafka-password", "--lang", "ru"], capsys) == (
        "tracker worker: ошибка: пароль Kafka никогда не передаётся в командной строке: используйте "
        "--kafka-password-file или TRACKER_KAFKA_PASSWORD"
    )


def test_lang_before_the_command_is_read_too(capsys: pytest.CaptureFixture[str]) -> None:
    """``tracker --lang ru standings FILE`` (not shown in ``tracker --help``: each command documents it)."""
    assert isinstance(parser(), Parser)
    code = main(["--lang", "ru", "standings", str(Path(__file__).parents[1] / "data" / "byes.trf")])
    assert code == 0 and "Игрок" in capsys.readouterr().out


if __name__ == "__main__":
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        os.environ.pop(name, None)
    os.environ["COLUMNS"] = WIDTH
    ENGLISH_HELP.write_text("\n".join(every_help()), encoding="utf-8")
    sys.exit(0)
