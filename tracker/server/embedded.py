"""``tracker up``: journal + processor + gateway in one process.

Start: open the journal, fold every journalled event (the state is exactly
what was acknowledged), then serve.  SIGTERM or SIGINT: stop accepting,
close clients with 1001 (going away), flush the journal, exit.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from contextlib import suppress

from tracker.config import ServerConfig
from tracker.server.gateway import Gateway, bound_port
from tracker.server.hub import Hub
from tracker.server.journal import Journal
from tracker.server.metrics import Metrics
from tracker.server.processor import EmbeddedProcessor

JOURNAL_FILE = "journal.sqlite3"


async def run_embedded(
    config: ServerConfig,
    *,
    say: Callable[[str], None] = print,
    demo: Callable[[int], asyncio.Future[object] | asyncio.Task[object]] | None = None,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT.

    ``demo``, when given, is started with the bound port once the server
    listens (the bundled tournament's replay) and cancelled on shutdown.
    """
    metrics = Metrics()
    hub = Hub(metrics, history=config.limits.history, max_buffer=config.limits.max_buffer)
    journal = Journal(config.data_dir / JOURNAL_FILE, durable=config.durable)
    journal.open()
    processor = EmbeddedProcessor(journal, hub, metrics)
    replayed = processor.replay(journal.read(), progress)
    say(f"journal {config.data_dir / JOURNAL_FILE}: {replayed} events replayed, {len(processor.states)} tournaments")
    gateway = Gateway(config, hub, processor, metrics)
    processor.listeners.append(gateway.updated)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with journal, gateway.server() as server:
            port = bound_port(server)
            say(f"tracker up: listening on http://{config.host}:{port}/ (websocket ws://{config.host}:{port}/ws)")
            demo_task = demo(port) if demo is not None else None
            await stop.wait()
            say("tracker: shutting down (closing clients, flushing the journal)")
            if demo_task is not None:
                demo_task.cancel()
                with suppress(asyncio.CancelledError, Exception):
                    await demo_task
            server.close(close_connections=True)
            await server.wait_closed()
            await gateway.aclose()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
