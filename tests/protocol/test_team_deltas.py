"""A team event's ``matches`` in deltas (protocol v1.1): only the rounds whose matches changed, and
``match_rounds`` when the set of rounds changed.  Every payload of a replay, corrections and voids included,
is rebuilt exactly from the one before and its delta."""

from __future__ import annotations

import dataclasses
import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tracker.core.apply import Batch
from tracker.core.events import Event, ResultCorrected, ResultRecorded, ResultVoided
from tracker.core.standings import standings
from tracker.formats.files import read_file
from tracker.protocol import apply_delta, diff_standings
from tracker.protocol.shapes import standings_payload

TEAM_RR = Path(__file__).resolve().parents[1] / "data" / "team-rr"


def _payloads(path: Path, scheduled: bool = True) -> list[dict[str, Any]]:
    """The standings payload after each event of ``path``, then a correction and a void of its last games;
    ``scheduled`` false: read without its schedule (no round to play is listed before its first board)."""
    tf = read_file(str(path))
    if not scheduled:
        tf = dataclasses.replace(tf, opened=msgspec.structs.replace(tf.opened, schedule=None))
    games = [e for e in tf.events if isinstance(e, ResultRecorded)]
    tid = tf.opened.tournament
    last = games[-1]
    extra: list[Event] = [
        ResultCorrected(
            f"{tid}/fix", tid, last.round, last.white, last.black, "0-1" if last.result == "1-0" else "1-0"
        ),
        *(
            ResultVoided(f"{tid}/void{k}", tid, g.round, g.white, g.black)
            for k, g in enumerate(games)
            if g.round == last.round
        ),
    ]
    batch = Batch()
    batch.fold(tf.opened)
    out = []
    for event in (*tf.events, *extra):
        batch.fold(event)
        state = batch.finish()
        assert state is not None
        out.append(json.loads(json.dumps(standings_payload(standings(state)))))
    return out


@pytest.mark.parametrize("scheduled", [True, False])
@pytest.mark.parametrize("name", ["team-rr-9001.trf", "team-rr-9008.trf"])
def test_deltas_carry_the_changed_rounds_of_matches_and_rebuild_every_payload(name: str, scheduled: bool) -> None:
    payloads = _payloads(TEAM_RR / name, scheduled)
    sizes = []
    dropped = 0
    for before, after in pairwise(payloads):
        top, rows, order = diff_standings(before, after)
        delta = {"type": "update", "delta": True, "tournament": after["tournament"], "seq": after["seq"], **top}
        delta.update(rows=rows, **({"order": order} if order is not None else {}))
        assert apply_delta(before, delta) == after
        if "matches" in delta:
            # one event changes its own round's matches and, when it is the last board of a round to come in,
            # lists the next round's scheduled matches too (tracker.core.teams.standings.upcoming)
            changed = [r["round"] for r in delta["matches"]]
            assert len(changed) <= 2 and all(b - a == 1 for a, b in pairwise(changed)), changed
            sizes.append((len(json.dumps(delta["matches"])), len(json.dumps(after["matches"]))))
        if "match_rounds" in delta:
            assert delta["match_rounds"] == [r["round"] for r in after["matches"]]
            dropped += len({r["round"] for r in before["matches"]} - {r["round"] for r in after["matches"]})
    if scheduled:  # voided, the last round's matches are the round to play again: listed, every board pending
        assert dropped == 0
        last = payloads[-1]["matches"][-1]
        assert all(b["result"] is None for m in last["matches"] for b in m["boards"])
    else:
        assert dropped == 1, "voiding the last round's every board takes the round out of matches"
    late = sizes[len(sizes) // 2 :]
    assert sum(d for d, _ in late) * 3 < sum(whole for _, whole in late), "the later deltas send a round, not all"
