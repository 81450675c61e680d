"""``tracker up``: journal + processor + gateway in one process.

Start: open the journal, fold every journalled event (the state is exactly
what was acknowledged), restore the boards of the games in progress (kept
apart, :mod:`tracker.embedded.boards`), then serve
(:func:`tracker.gateway.serve.serve`).
On SIGTERM or SIGINT the gateway drains, then the journal is flushed.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from tracker.config import ServerConfig
from tracker.embedded.boards import BOARDS_FILE, BoardStore
from tracker.embedded.journal import Journal
from tracker.embedded.processor import EmbeddedProcessor
from tracker.gateway.metrics import Metrics
from tracker.gateway.serve import serve

JOURNAL_FILE = "journal.sqlite3"


async def run_embedded(
    config: ServerConfig,
    *,
    say: Callable[[str], None] = print,
    demo: Callable[[int], Coroutine[Any, Any, object]] | None = None,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT.

    ``demo``, when given, is started with the bound port once the server
    listens (the bundled tournament's replay) and cancelled on shutdown.
    """
    metrics = Metrics()
    path = config.data_dir / JOURNAL_FILE
    if path.exists() and path.stat().st_size == 0:
        say(f"warning: the journal {path} is an empty file (0 bytes): starting with no events")
    journal = Journal(path, durable=config.durable)
    journal.open()
    store = BoardStore(config.data_dir / BOARDS_FILE)
    store.open()
    processor = EmbeddedProcessor(journal, metrics, boards=store)
    replayed = processor.replay(journal.read(), progress)
    say(f"journal {path}: {replayed} events replayed, {len(processor.states)} tournaments")
    restored = processor.restore_boards(store.load())
    if restored:
        say(f"boards {store.path}: {restored} games in progress restored")
    async with journal, store:
        await serve(config, processor, name="tracker up", say=say, metrics=metrics, background=demo)
        say("tracker up: flushing the journal")
        await processor.drain()
