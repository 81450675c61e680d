"""The ``tracker`` command: the only place that reads argv and the environment.

Each sub-command builds one frozen configuration and hands it to the shell
(:mod:`tracker.server`, :mod:`tracker.kafka`) or, for ``standings``, folds a
file through the core and prints the result.  Errors a user can fix (a bad
file, a rejected event, a server that cannot be reached) are printed as one
sentence and exit non-zero, never as a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import secrets
import sys
import tempfile
from collections.abc import Sequence
from fractions import Fraction
from importlib import resources
from pathlib import Path

import msgspec
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from tracker.config import Limits, ServerConfig
from tracker.core.errors import TrackerError
from tracker.core.standings import Standings, format_points, standings, standings_json
from tracker.core.tiebreaks import parse_code_list, parse_tiebreaks
from tracker.formats import TournamentFile, state_from
from tracker.formats.files import read_file

DEMO_FILE = "sinquefield-cup-2021.trf"

console = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def demo_file() -> str:
    return str(resources.files("tracker.data").joinpath(DEMO_FILE))


# -- standings ----------------------------------------------------------------


def cmd_standings(args: argparse.Namespace) -> int:
    tf = read_file(args.file)
    if args.after_round is not None:
        tf = tf.until_round(args.after_round)
    changes: dict[str, object] = {}
    if args.tiebreaks:
        codes = parse_code_list(args.tiebreaks)
        parse_tiebreaks(codes)
        changes["tiebreaks"] = codes
    if args.basis:
        changes["basis"] = args.basis
    if args.provisional:
        changes["provisional"] = args.provisional
    if changes:
        tf = TournamentFile(msgspec.structs.replace(tf.opened, **changes), tf.events)
    state = state_from(tf)
    table = standings(state)
    if args.format == "json":
        print(json.dumps(standings_json(table), ensure_ascii=False, indent=2))
    elif args.format == "trf":
        from tracker.formats.trf import export_trf

        sys.stdout.write(export_trf(state))
    else:
        print_table(table)
    if args.project:
        from tracker.cli_projection import print_projection

        print_projection(state, console)
    return 0


def _num(value: object) -> str:
    return format_points(value) if isinstance(value, Fraction) else str(value)


def print_table(s: Standings) -> None:
    status = "provisional" if s.provisional else "final"
    table = Table(title=f"{s.name} — after {sum(r.games for r in s.rows) // 2} games ({status}, {s.basis} basis)")
    table.add_column("Rk", justify="right")
    table.add_column("No", justify="right")
    table.add_column("Player")
    table.add_column("Pts", justify="right", style="bold")
    for code in s.codes:
        table.add_column(code, justify="right")
    table.add_column("G", justify="right")
    for row in s.rows:
        name = row.name + (" (withdrawn)" if row.withdrawn else "")
        table.add_row(
            str(row.rank), str(row.start_no), name, _num(row.points), *(_num(v) for v in row.tiebreaks), str(row.games)
        )
    console.print(table)


# -- up / replay ----------------------------------------------------------------


def arbiter_token(args: argparse.Namespace) -> str:
    """The arbiter token: ``--token``, else the first line of ``--token-file``, else ``$TRACKER_TOKEN`` ("": none).

    A file or the environment keeps the token out of ``ps``.  Raises
    :class:`OSError` when the file cannot be read, :class:`TrackerError` when it is empty.
    """
    if args.token:
        return str(args.token)
    if args.token_file:
        lines = Path(args.token_file).read_text(encoding="utf-8").strip().splitlines()
        if not lines or not lines[0].strip():
            raise TrackerError(f"{args.token_file}: the token file is empty")
        return lines[0].strip()
    return os.environ.get("TRACKER_TOKEN", "")


def server_config(args: argparse.Namespace, *, data_dir: Path) -> ServerConfig:
    token = arbiter_token(args)
    if not token:
        token = secrets.token_urlsafe(18)
        print(f"arbiter token (generated; set TRACKER_TOKEN or --token-file to choose one): {token}", flush=True)
    origins = tuple(o for o in (args.allow_origin or []) if o) or None
    return ServerConfig(
        host=args.host,
        port=args.port,
        token=token,
        data_dir=data_dir,
        durable=not args.no_durability,
        allowed_origins=origins,
        limits=Limits(
            max_frame=args.max_frame,
            max_connections=args.max_connections,
            max_buffer=args.max_buffer,
            max_subscriptions=args.max_subscriptions,
            submits_per_second=args.submits_per_second,
            submit_burst=args.submit_burst,
        ),
    )


def cmd_up(args: argparse.Namespace) -> int:
    from tracker.server.embedded import run_embedded

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.data_dir:
        data_dir = Path(args.data_dir)
    elif args.demo:
        data_dir = Path(tempfile.mkdtemp(prefix="tracker-demo-"))
    else:
        data_dir = Path("data")
    config = server_config(args, data_dir=data_dir)

    def say(line: str) -> None:
        print(line, flush=True)

    demo = None
    if args.demo:
        tf = read_file(demo_file())

        def demo(port: int) -> asyncio.Task[object]:
            return asyncio.create_task(_run_demo(tf, config, port, args.rate or 0.7))

    asyncio.run(run_embedded(config, say=say, demo=demo))
    return 0


async def _run_demo(tf: TournamentFile, config: ServerConfig, port: int, rate: float) -> object:
    from tracker.client import replay_ws

    base = f"http://{config.host}:{port}"
    tid = tf.opened.tournament
    print(
        f"demo: replaying {tf.opened.name} ({len(tf.events)} results, {rate:g} per second)\n"
        f"  spectators: {base}/t/{tid}\n  overlay:    {base}/overlay/{tid}\n"
        f"  arbiter:    {base}/arbiter/{tid}\n  standings:  {base}/api/tournaments/{tid}/standings",
        flush=True,
    )
    watcher = asyncio.create_task(_narrate(f"ws://{config.host}:{port}/ws", tid, 1 + len(tf.events)))
    try:
        result = await replay_ws(tf, f"ws://{config.host}:{port}/ws", config.token, rate=rate)
        async with asyncio.timeout(10):
            await watcher
    finally:
        watcher.cancel()
    print(f"demo: all {result.acked} events acknowledged; final standings at {base}/t/{tid}", flush=True)
    return result


async def _narrate(url: str, tournament: str, last_seq: int) -> None:
    """Print each update of the demo in plain words, with the leaders."""
    from websockets.asyncio.client import connect

    async with connect(url, max_size=2**24) as ws:
        await ws.send(json.dumps({"type": "subscribe", "tournament": tournament}))
        async for raw in ws:
            msg = json.loads(raw)
            if msg.get("type") != "update":
                continue
            rows = msg["standings"]
            top = ", ".join(
                f"{r['rank']}. {r['name'].split(',')[0]} {r['points']:g} (KS {r['tiebreaks']['KS']:g})"
                for r in rows[:3]
            )
            print(f"  #{msg['seq']:>3} {msg['summary']}\n        leaders: {top}", flush=True)
            if msg["seq"] >= last_seq:
                return


def cmd_replay(args: argparse.Namespace) -> int:
    tf = read_file(args.file, args.tournament)
    total = 1 + len(tf.events)
    if args.broker:
        from tracker.kafka.producer import replay_kafka

        asyncio.run(replay_kafka(tf, args.broker, rate=args.rate))
        print(f"replay: produced {total} events for {tf.opened.tournament} to {args.broker}")
        return 0
    if not args.url:
        err.print("tracker replay: give --url ws://HOST:PORT/ws (with --token) or --broker kafka://HOST:PORT")
        return 2
    token = arbiter_token(args)
    from tracker.client import replay_ws

    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err
    ) as bar:
        task = bar.add_task(f"replay {tf.opened.tournament}", total=total)
        result = asyncio.run(replay_ws(tf, args.url, token, rate=args.rate, progress=lambda n: bar.advance(task, n)))
    if result.rejected:
        for event_id, code, reason in result.rejected:
            err.print(f"tracker replay: event {event_id} rejected ({code}): {reason}")
        return 1
    print(f"replay: {result.acked} of {total} events acknowledged; last seq {result.last_seq}")
    return 0


def cmd_follow(args: argparse.Namespace) -> int:
    from tracker.follow import run_follow

    token = arbiter_token(args)
    return run_follow(
        args.source,
        args.tournament,
        url=args.url,
        token=token,
        broker=args.broker,
        interval=args.interval,
        once=args.once,
    )


# -- distributed --------------------------------------------------------------------


def cmd_worker(args: argparse.Namespace) -> int:
    from tracker.kafka.worker import WorkerSettings, run_worker

    settings = WorkerSettings(
        args.broker,
        args.partitions,
        Path(args.data_dir) if args.data_dir else None,
        loglevel=args.log_level.upper(),
    )
    return run_worker(settings)


def cmd_gateway(args: argparse.Namespace) -> int:
    from tracker.kafka.gateway import run_gateway

    config = server_config(args, data_dir=Path(args.data_dir or "."))
    return run_gateway(args.broker, config)


# -- argument parsing ------------------------------------------------------------


def _token_file_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--token-file", metavar="PATH", help="read the arbiter token from this file (not visible in ps)")


def _server_options(p: argparse.ArgumentParser, *, port: int = 8080) -> None:
    p.add_argument("--port", type=int, default=port, help="TCP port (0 picks a free one)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--token", help="arbiter token (default: $TRACKER_TOKEN, else one is generated and printed)")
    _token_file_option(p)
    p.add_argument("--allow-origin", action="append", help="browser origin allowed to open websockets (repeatable)")
    p.add_argument("--max-frame", type=int, default=Limits().max_frame, help="largest websocket message in bytes")
    p.add_argument("--max-connections", type=int, default=Limits().max_connections)
    p.add_argument(
        "--max-buffer", type=int, default=Limits().max_buffer, help="unsent bytes per subscriber before it is dropped"
    )
    p.add_argument(
        "--max-subscriptions", type=int, default=Limits().max_subscriptions, help="tournaments per connection"
    )
    p.add_argument("--submits-per-second", type=float, default=Limits().submits_per_second, help="per token, sustained")
    p.add_argument("--submit-burst", type=int, default=Limits().submit_burst, help="per token, burst")
    p.add_argument("--no-durability", action="store_true", help=argparse.SUPPRESS)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="tracker", description="Live Koya tie-breaks for round-robin chess events.")
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("standings", help="print the standings of a TRF or PGN file")
    p.add_argument("file")
    p.add_argument("--after-round", type=int, metavar="N")
    p.add_argument("--tiebreaks", metavar="CODES", help="e.g. KS,KS/L-2,SB (TRF26 202 syntax)")
    p.add_argument("--basis", choices=["games", "rounds"])
    p.add_argument("--provisional", choices=["percentage", "max-games", "rounds"])
    p.add_argument("--format", choices=["table", "json", "trf"], default="table")
    p.add_argument("--project", action="store_true", help="also print what the remaining games can change")
    p.set_defaults(run=cmd_standings)

    p = sub.add_parser("up", help="run the embedded tracker: journal, processor, gateway, pages")
    p.add_argument("--demo", action="store_true", help="replay a bundled real tournament at a watchable pace")
    p.add_argument("--data-dir", help="where the journal lives (default ./data; a fresh temp dir with --demo)")
    p.add_argument("--rate", type=float, help="demo pace in results per second (default 0.7)")
    _server_options(p)
    p.set_defaults(run=cmd_up)

    p = sub.add_parser("replay", help="submit a TRF/PGN file's results to a running tracker")
    p.add_argument("file")
    p.add_argument("--tournament", metavar="ID", help="tournament id (default: slug of the event name)")
    p.add_argument("--url", help="ws://HOST:PORT/ws of a tracker or gateway")
    p.add_argument("--token", help="arbiter token (default: $TRACKER_TOKEN)")
    _token_file_option(p)
    p.add_argument("--broker", help="kafka://HOST:PORT to produce to the results topic directly")
    p.add_argument("--rate", type=float, metavar="EVENTS_PER_S")
    p.set_defaults(run=cmd_replay)

    p = sub.add_parser("follow", help="watch a live PGN source or a TRF file and submit what changes")
    p.add_argument("source", help="http(s) URL of a PGN, or a local .pgn/.trf file")
    p.add_argument("--tournament", metavar="ID", required=True)
    p.add_argument("--url", help="ws://HOST:PORT/ws of a tracker or gateway")
    p.add_argument("--token", help="arbiter token (default: $TRACKER_TOKEN)")
    _token_file_option(p)
    p.add_argument("--broker", help="kafka://HOST:PORT to produce to the results topic directly")
    p.add_argument("--interval", type=float, default=5.0, metavar="S", help="seconds between polls")
    p.add_argument("--once", action="store_true", help="read the source once, submit what changed, exit")
    p.set_defaults(run=cmd_follow)

    p = sub.add_parser("worker", help="run a Faust worker (distributed deployment)")
    p.add_argument("--broker", required=True, help="kafka://HOST:PORT")
    p.add_argument("--partitions", type=int, default=8)
    p.add_argument("--data-dir", default=None, help="Faust table data directory")
    p.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default=os.environ.get("TRACKER_LOG_LEVEL", "warning").lower(),
        help="what the worker logs (default warning, or TRACKER_LOG_LEVEL); info shows rebalances and recovery",
    )
    p.set_defaults(run=cmd_worker)

    p = sub.add_parser("gateway", help="run a websocket gateway fed by the standings topic")
    p.add_argument("--broker", required=True, help="kafka://HOST:PORT")
    p.add_argument("--data-dir", default=None)
    _server_options(p)
    p.set_defaults(run=cmd_gateway)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except TrackerError as exc:
        err.print(f"tracker {args.command}: {exc}", markup=False)
        return 1
    except OSError as exc:
        err.print(f"tracker {args.command}: {exc}", markup=False)
        return 1
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
