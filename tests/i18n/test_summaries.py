"""Every summary as phrases: rendered from its keys in English, it is byte for byte the sentence tracker wrote before.

``data/summaries-v1.json`` holds the ``summary`` of every update of the test
files and of one crafted session (corrections, voids, every kind of bye, both
kinds of withdrawal), as the code before the phrases wrote them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.builders import TID, bye, correct, game, opened, void, withdraw
from tracker.core.apply import Update, apply, summary_text
from tracker.core.errors import EventRejected
from tracker.core.events import ByeVoided, Event, PlayerWithdrawn
from tracker.formats.files import read_file
from tracker.i18n import LANGUAGES, language

REPO = Path(__file__).resolve().parents[2]
GOLDEN: dict[str, list[str | None]] = json.loads((Path(__file__).parent / "data" / "summaries-v1.json").read_text())


def crafted() -> list[Event]:
    return [
        opened(6),
        game(1, 1, 2, "1-0"),
        game(1, 3, 4, "1/2-1/2"),
        correct(1, 1, 2, "0-1"),
        game(1, 5, 6, "+-"),
        void(1, 3, 4),
        game(2, 2, 3, "1-0"),
        bye(2, 4, "half"),
        bye(2, 1, "full"),
        bye(2, 6, "zero"),
        game(2, 5, 1, "--"),  # rejected: 1 has a bye in round 2
        game(3, 1, 4, "1/2-1/2"),
        withdraw(5),
        ByeVoided(id="bv", tournament=TID, round=2, player=4),
        bye(3, 2, "pab"),
        PlayerWithdrawn(id="w6", tournament=TID, player=6, round=4),
    ]


def sessions() -> Iterator[tuple[str, list[Event]]]:
    for name in GOLDEN:
        if name == "crafted":
            yield name, crafted()
            continue
        folder = "tests/data" if (REPO / "tests" / "data" / name).exists() else "tracker/data"
        tf = read_file(str(REPO / folder / name))
        yield name, [tf.opened, *tf.events]


def updates(events: list[Event]) -> Iterator[tuple[Update | None, Callable[[int], str]]]:
    state = None
    for event in events:
        try:
            state, update = apply(state, event)
        except EventRejected:
            yield None, str
            continue
        players = {p.start_no: p.name.split(",")[0].strip() or p.name for p in state.opened.players}
        yield update, players.__getitem__


@pytest.mark.parametrize(("name", "events"), list(sessions()), ids=list(GOLDEN))
def test_summaries_rendered_from_keys_are_the_v1_sentences(name: str, events: list[Event]) -> None:
    en = language("en")
    checked = 0
    for (update, names), before in zip(updates(events), GOLDEN[name], strict=True):
        if update is None:
            assert before is None or before.startswith("rejected:")
            continue
        assert update.summary == before
        assert summary_text(update.said, names, en) == before  # the English catalogue (the template) says the same
        checked += 1
    assert checked >= 6


def test_every_language_renders_every_summary_with_no_argument_left() -> None:
    for code in LANGUAGES[1:]:
        lang = language(code)
        for _, events in sessions():
            for update, names in updates(events):
                if update is not None:
                    text = summary_text(update.said, names, lang)
                    assert "{" not in text and text != update.summary, (code, text)
