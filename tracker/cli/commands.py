"""The sub-commands: each builds one frozen configuration and hands it to the shell, or folds a file and prints."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import errno
import json
import os
import secrets
import socket
import sys
import tempfile
from collections.abc import Coroutine
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from tracker.cli import words
from tracker.cli.logs import configure_logging
from tracker.cli.words import of, say
from tracker.config import KafkaSecurity, Limits, ServerConfig, WorkerSettings
from tracker.core.audit import RANK, Disagreement
from tracker.core.crosstable import Tournament
from tracker.core.errors import TrackerError
from tracker.core.events import Line, Rules, Teams
from tracker.core.standings import standings
from tracker.core.teams import TeamSetup
from tracker.core.teams.standings import team_standings
from tracker.core.teams.tiebreaks import parse_team_tiebreaks
from tracker.core.tiebreaks import parse_code_list, parse_tiebreak, parse_tiebreaks, rule_of
from tracker.formats import TournamentFile, state_from
from tracker.formats.files import read_file
from tracker.formats.trf.read import team_setup_of
from tracker.i18n import Catalogue, language
from tracker.protocol import standings_json
from tracker.protocol.shapes import team_rows_json

if TYPE_CHECKING:
    from rich.console import Console


# rich (tables, the progress bar, and the consoles they print on) is imported when a command first prints through it:
# a server's start, most of the suite's CLI runs, never does (about 45 ms of each start's imports)
@cache
def console() -> Console:
    """Standard output, for tables."""
    from rich.console import Console

    return Console(highlight=False)


@cache
def err() -> Console:
    """Standard error, for messages: soft_wrap, so a message is one line however wide the terminal, and not cut at
    80 columns when piped."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


# -- standings ----------------------------------------------------------------


def cmd_standings(args: argparse.Namespace) -> int:
    from tracker.cli.tables import print_table, provisional_notes
    from tracker.cli.teams import print_team_table

    tf = read_file(args.file, final=args.final, rules=args.rules)
    if args.after_round is not None:
        tf = tf.until_round(args.after_round)
    changes: dict[str, object] = {}
    teams = team_setup_of(tf, args.file)
    team_codes: tuple[str, ...] | None = None
    if args.tiebreaks and teams is not None:  # a team event: the codes are the team order, the players keep theirs
        team_codes = parse_code_list(args.tiebreaks)
        parse_team_tiebreaks(team_codes)
    elif args.tiebreaks:
        codes = parse_code_list(args.tiebreaks)
        parse_tiebreaks(codes, tf.opened.rules)
        changes["tiebreaks"] = codes
    if args.basis:
        changes["basis"] = args.basis
    if args.provisional:
        changes["provisional"] = args.provisional
    if args.lines:
        changes["lines"] = parse_lines(args.lines, of(args))
    if args.playoff:
        changes["playoff"] = True
    if changes:
        tf = dataclasses.replace(tf, opened=msgspec.structs.replace(tf.opened, **changes))
    state = state_from(tf)
    table = standings(state)
    team_table = team_standings(state, teams, team_codes) if teams is not None else None
    from tracker.cli.worth import category_settings

    categories = category_settings(tf.opened, args.category, of(args))  # refused before anything is printed
    if args.format == "json":
        from tracker.cli.worth import add_worth, category_json, prize_settings

        rows = standings_json(table)
        if team_table is not None:
            rows["teams"] = team_rows_json(team_table)
        prizes, sharing = prize_settings(tf.opened, args.prizes, args.sharing, of(args))
        if prizes is None and categories:
            prizes = ()
        worth = add_worth(rows, state, table, prizes, sharing, categories)
        document: dict[str, object] = {**rows, "notes": [*tf.notes, *provisional_notes(state, table), *worth]}
        if prizes is not None:
            document["prizes"] = [float(p) for p in prizes]
            document["sharing"] = sharing
        if categories:
            document["categories"] = [category_json(c) for c in categories]
        if args.project and teams is not None:  # a team event: the teams' rank ranges over the pending boards
            from tracker.cli.teams import team_projection_json
            from tracker.core.teams.chances import team_chances
            from tracker.core.teams.projection import project_teams
            from tracker.core.teams.stakes import team_lines

            projected = project_teams(state, teams, team_codes)
            lines = team_lines(teams)
            odds = team_chances(state, teams, lines, projected.key, seed=state.seq)
            document["projection"] = team_projection_json(projected, lines, odds)
        elif args.project:
            from tracker.core.projection import project
            from tracker.protocol import projection_json

            document["projection"] = projection_json(project(state))
        print(json.dumps(document, ensure_ascii=False, indent=2))
        return 0
    for note in notes_in(tf, of(args)):  # how the file was read, apart from the table: stdout stays a table or TRF
        err().print(f"tracker standings: {say(words.NOTE(note=note), of(args))}", markup=False)
    if args.format == "trf":
        from tracker.formats.trf.write import trf_bytes

        _write_bytes(trf_bytes(state, args.encoding))
    else:
        if team_table is not None:
            print_team_table(team_table, table.name, console(), of(args))
        print_table(table, console(), state, of(args))
        if args.worth:
            from tracker.cli.worth import print_worth, prize_settings

            prizes, sharing = prize_settings(tf.opened, args.prizes, args.sharing, of(args))
            print_worth(state, table, console(), of(args), prizes, sharing, categories)
    return 0 if not args.project else _project(state, args, teams, team_codes)


def notes_in(tf: TournamentFile, lang: Catalogue) -> list[str]:
    """How the file was read, in ``lang``: the readers' notes as phrases (their English when a reader gave none)."""
    if len(tf.said) == len(tf.notes):
        return [say(n, lang) for n in tf.said]
    return list(tf.notes)


def cmd_check(args: argparse.Namespace) -> int:
    """``tracker check FILE``: 0 when the official figures agree with tracker's, 1 when they do not, 2 with none."""
    from tracker.core.audit import audit

    lang = of(args)
    tf = read_file(args.file, final=args.final, rules=args.rules)
    for note in notes_in(tf, lang):
        err().print(f"tracker check: {say(words.NOTE(note=note), lang)}", markup=False)
    if not tf.official:
        err().print(f"tracker check: {say(words.CHECK_NOTHING(file=args.file), lang)}", markup=False)
        return 2
    declared = bool(args.tiebreaks) or _names_tiebreaks(args.file)
    if args.tiebreaks:
        codes = parse_code_list(args.tiebreaks)
        parse_tiebreaks(codes, tf.opened.rules)
        tf = dataclasses.replace(tf, opened=msgspec.structs.replace(tf.opened, tiebreaks=codes))
    found = audit(tf.opened, tf.events, tf.official, declared=declared)
    checked = sum((o.rank is not None) + len(o.values) for o in tf.official)
    if args.format == "json":
        document = {
            "file": args.file,
            "rules": tf.opened.rules,
            "tiebreaks": list(tf.opened.tiebreaks),
            "checked": checked,
            "agrees": not found,
            "disagreements": [
                {
                    "start_no": d.start_no,
                    "name": d.name,
                    "what": d.what,
                    "official": float(d.official),
                    "computed": float(d.computed),
                    "cause": d.cause,
                }
                for d in found
            ],
        }
        print(json.dumps(document, ensure_ascii=False, indent=2))
    else:  # plain print: one line per finding, never wrapped (it is read and grepped)
        verdict = words.CHECK_DISAGREE if found else words.CHECK_AGREE
        order = ",".join(tf.opened.tiebreaks)
        said = verdict(file=args.file, n=len(found) if found else checked, codes=order, rules=tf.opened.rules)
        print(say(said, lang))
        for d in found:
            print(f"  {_figure(d, lang)}")
    return 1 if found else 0


def _figure(d: Disagreement, lang: Catalogue) -> str:
    """One disagreement in ``lang`` (``Disagreement.sentence`` in English), its cause too (the audit's phrase)."""
    grouped = d.what != RANK and rule_of(parse_tiebreak(d.what)).grouped
    shown = (lambda v: words.place(int(v), lang)) if grouped else lang.points
    what = say(words.CHECK_PLACE(), lang) if d.what == RANK else d.what
    said = words.CHECK_FIGURE(
        name=d.name,
        start_no=d.start_no,
        what=what,
        official=shown(d.official),
        computed=shown(d.computed),
        cause=say(d.said, lang) if d.said else d.cause,
    )
    return say(said, lang)


def cmd_new(args: argparse.Namespace) -> int:
    """``tracker new PLAYERS``: a TRF of the round robin with its Berger schedule, ready for ``tracker replay``."""
    import re

    from tracker.formats.base import file_stem
    from tracker.formats.files import decode_text
    from tracker.formats.startlist import (
        berger_team_tournament,
        berger_tournament,
        parse_startlist,
        start_list_k,
        start_list_teams,
    )
    from tracker.formats.trf.write import trf_bytes

    try:
        data = Path(args.players).read_bytes()
    except OSError as exc:
        raise TrackerError(f"{args.players}: cannot read the file: {exc.strerror or exc}") from None
    text, _ = decode_text(data, args.players)
    players = parse_startlist(text, args.players)
    if args.start_date and not re.fullmatch(r"\d{4}/\d{2}/\d{2}", args.start_date):
        raise TrackerError(say(words.START_DATE(text=repr(args.start_date)), of(args)))
    rules: Rules = args.rules or ("2024" if args.start_date and args.start_date < "2026/03/01" else "2026")
    codes = ("PTS", *(c for c in parse_code_list(args.tiebreaks) if c != "PTS")) if args.tiebreaks else None
    teams = start_list_teams(text, args.players)
    if teams is not None:  # a team round robin: Berger over the teams, board k against board k
        tf = berger_team_tournament(
            players,
            teams,
            args.name or file_stem(args.players),
            boards=args.boards,
            cycles=args.cycles,
            rules=rules,
            start_date=args.start_date or "",
            path=args.players,
            ks=start_list_k(text, args.players),
        )
    elif args.boards:
        raise TrackerError(say(words.NEW_BOARDS_WITHOUT_TEAMS(file=args.players), of(args)))
    else:
        tf = berger_tournament(
            players,
            args.name or file_stem(args.players),
            cycles=args.cycles,
            rules=rules,
            start_date=args.start_date or "",
            path=args.players,
            ks=start_list_k(text, args.players),
            **({"tiebreaks": codes} if codes else {}),
        )
    trf = trf_bytes(state_from(tf), args.encoding)
    if args.output:
        Path(args.output).write_bytes(trf)
        if isinstance(tf.opened.teams, Teams):
            said = words.NEW_WRITTEN_TEAMS(
                teams=words.NEW_TEAMS(n=len(tf.opened.teams.teams)),
                boards=tf.opened.teams.boards,
                players=words.NEW_PLAYERS(n=len(players)),
                rounds=words.NEW_ROUNDS(n=tf.opened.teams.rounds),
                file=args.output,
            )
        else:
            said = words.NEW_WRITTEN(
                players=words.NEW_PLAYERS(n=len(players)), rounds=words.NEW_ROUNDS(n=tf.opened.rounds), file=args.output
            )
        err().print(f"tracker new: {say(said, of(args))}", markup=False)
    else:
        _write_bytes(trf)
    return 0


def _write_bytes(data: bytes) -> None:
    """``data`` on standard output as it is (a TRF in its own encoding, whatever the terminal's)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _names_tiebreaks(path: str) -> bool:
    """Whether a TRF file has a ``202`` or ``212`` record (its own tie-break order)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return any(line.startswith(("202 ", "212 ")) for line in f)


def _project(
    state: Tournament, args: argparse.Namespace, teams: TeamSetup | None = None, codes: tuple[str, ...] | None = None
) -> int:
    """The projection's tables: the teams' rank ranges for a team event, else the players' Koya projection."""
    if teams is not None:
        from tracker.cli.teams import print_team_projection
        from tracker.core.teams.projection import project_teams

        names = {pl.start_no: pl.name for pl in state.opened.players}
        print_team_projection(project_teams(state, teams, codes), names, console(), of(args))
        return 0
    from tracker.cli.projection import print_projection

    print_projection(state, console(), of(args))
    return 0


def parse_lines(text: str, lang: Catalogue | None = None) -> tuple[Line, ...]:
    """``--lines 1,3`` → the lines of the first 1 and 3 places; raises :class:`TrackerError` for anything else."""
    lang = lang or language("en")
    try:
        places = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise TrackerError(say(words.LINES_FORM(text=repr(text)), lang)) from None
    if not places or any(p < 1 for p in places):
        raise TrackerError(say(words.LINES_PLACES(text=repr(text)), lang))
    return tuple(Line(p) for p in sorted(set(places)))


# -- up / replay ----------------------------------------------------------------


def arbiter_token(args: argparse.Namespace) -> str:
    """The arbiter token: ``--token``, else the first line of ``--token-file``, else ``$TRACKER_TOKEN`` ("": none).

    A file or the environment keeps the token out of ``ps``.  Raises
    :class:`OSError` when the file cannot be read, :class:`TrackerError` when it is empty.
    """
    if args.token:
        return str(args.token)
    if args.token_file:
        _warn_if_readable_by_others(Path(args.token_file), "token")
        lines = Path(args.token_file).read_text(encoding="utf-8").strip().splitlines()
        if not lines or not lines[0].strip():
            raise TrackerError(f"{args.token_file}: the token file is empty")
        return lines[0].strip()
    return os.environ.get("TRACKER_TOKEN", "")


MIN_TOKEN_LENGTH = 16


def _warn_if_readable_by_others(path: Path, what: str) -> None:
    """Say so when a secret's file can be read by every user of the machine (it is still used)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # reading it says why
    if mode & 0o004:
        err().print(f"warning: {path} (the {what} file) can be read by every user of this machine: chmod 600 {path}")


def server_config(args: argparse.Namespace, *, data_dir: Path) -> ServerConfig:
    """The server's configuration from its arguments.

    Raises :class:`TrackerError` for a token shorter than
    :data:`MIN_TOKEN_LENGTH` characters (one is generated when none is given).
    """
    token = arbiter_token(args)
    if token and len(token) < MIN_TOKEN_LENGTH:
        raise TrackerError(say(words.TOKEN_SHORT(n=MIN_TOKEN_LENGTH), of(args)))
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
            max_connections_per_address=args.max_connections_per_address,
            max_buffer=args.max_buffer,
            max_resume=args.max_resume_bytes,
            max_subscriptions=args.max_subscriptions,
            submits_per_second=args.submits_per_second,
            submit_burst=args.submit_burst,
            projection_seconds=args.projection_seconds,
            projection_memory=args.projection_memory,
            projection_search_seconds=args.projection_search_seconds,
        ),
        stale_after=args.stale_after,
    )


def port_is_free(host: str, port: int, lang: Catalogue | None = None) -> None:
    """Refuse, in one sentence, a port another program listens on, before anything is created.

    Binds (with ``SO_REUSEADDR``, as the server will) every address ``host``
    resolves to; raises :class:`TrackerError` naming the port when one of them
    is taken, or when ``port`` is not a TCP port.  Port 0 (any free port) is always free.
    """
    if not 0 <= port <= 0xFFFF:
        raise TrackerError(say(words.PORT_RANGE(port=port), lang or language("en")))
    if port == 0:
        return
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise TrackerError(f"cannot listen on {host}: {exc.strerror}") from None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise TrackerError(say(words.PORT_BUSY(port=port, host=host), lang or language("en"))) from None
                if exc.errno == errno.EACCES:
                    raise TrackerError(say(words.PORT_PRIVILEGED(port=port), lang or language("en"))) from None
                raise


def cmd_up(args: argparse.Namespace) -> int:
    """``tracker up``: a busy port is refused before anything is created; the demo's journal goes with it."""
    configure_logging(args.log_level, args.log_format, command=args.command)
    port_is_free(args.host, args.port, of(args))
    scratch: tempfile.TemporaryDirectory[str] | None = None
    if args.data_dir:
        data_dir = Path(args.data_dir)
    elif args.demo:  # the demo's journal is thrown away with it
        scratch = tempfile.TemporaryDirectory(prefix="tracker-demo-")
        data_dir = Path(scratch.name)
    else:
        data_dir = Path("data")
    try:
        return _up(args, data_dir)
    finally:
        if scratch is not None:
            scratch.cleanup()


def _up(args: argparse.Namespace, data_dir: Path) -> int:
    from tracker.embedded.run import run_embedded

    config = server_config(args, data_dir=data_dir)

    def say(line: str) -> None:
        print(line, flush=True)

    demo = None
    if args.demo:  # the demo's games (python-chess) only for the demo
        from tracker.cli.demo import DEMO_RATE, demo_file, run_demo

        tf = read_file(demo_file())

        def demo(port: int) -> Coroutine[Any, Any, object]:
            return run_demo(tf, config, port, args.rate or DEMO_RATE)

    asyncio.run(run_embedded(config, say=say, demo=demo))
    return 0


def kafka_security(args: argparse.Namespace) -> KafkaSecurity:
    """The TLS and SASL settings of ``--kafka-*``.

    The password comes from the first line of ``--kafka-password-file`` or
    from ``$TRACKER_KAFKA_PASSWORD``, never from argv (``ps`` would show it);
    an OAUTHBEARER token from ``--kafka-token-file``, read by the clients.
    Raises :class:`OSError` when the file cannot be read,
    :class:`TrackerError` when it is empty or the settings do not fit
    together (a password without SASL, SASL without a user).
    """
    password: str | None = None
    oauth = args.kafka_sasl_mechanism == "OAUTHBEARER"
    if args.kafka_password_file:
        _warn_if_readable_by_others(Path(args.kafka_password_file), "Kafka password")
        lines = Path(args.kafka_password_file).read_text(encoding="utf-8").splitlines()
        if not lines or not lines[0]:
            raise TrackerError(f"{args.kafka_password_file}: the Kafka password file is empty")
        password = lines[0]
    elif args.kafka_security.startswith("SASL_") and not oauth:  # an exported password breaks no plaintext command
        password = os.environ.get("TRACKER_KAFKA_PASSWORD") or None
    if args.kafka_security == "SASL_PLAINTEXT" and args.kafka_sasl_mechanism == "PLAIN":
        err().print(
            "warning: SASL_PLAINTEXT with PLAIN sends the Kafka password in clear on the network: "
            "use SASL_SSL, or SCRAM-SHA-512 if the broker cannot do TLS"
        )
    return KafkaSecurity(
        protocol=args.kafka_security,
        mechanism=args.kafka_sasl_mechanism,
        username=args.kafka_user,
        password=password,
        ca_file=args.kafka_ca_file,
        cert_file=args.kafka_cert_file,
        key_file=args.kafka_key_file,
        token_file=args.kafka_token_file,
    )


def cmd_replay(args: argparse.Namespace) -> int:
    tf = read_file(args.file, args.tournament)
    total = 1 + len(tf.events)
    if args.broker:
        return _replay_kafka(args, tf, total)
    if not args.url:
        err().print(f"tracker replay: {say(words.REPLAY_WHERE(), of(args))}", markup=False)
        return 2
    token = arbiter_token(args)
    if not token:  # the server would refuse the first event, without saying that none was given
        err().print(f"tracker replay: {say(words.REPLAY_NO_TOKEN(url=args.url), of(args))}", markup=False)
        return 2
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from tracker.client import replay_ws

    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err()
    ) as bar:
        task = bar.add_task(f"replay {tf.opened.tournament}", total=total)
        result = asyncio.run(replay_ws(tf, args.url, token, rate=args.rate, progress=lambda n: bar.advance(task, n)))
    if result.rejected:
        event_id, code, reason = result.rejected[0]
        err().print(f"tracker replay: event {event_id} rejected ({code}): {reason}")
        same = sum(1 for _, c, r in result.rejected[1:] if (c, r) == (code, reason))
        if same:
            err().print(f"tracker replay: {same} more events rejected for the same reason")
        for event_id, code, reason in (x for x in result.rejected[1:] if (x[1], x[2]) != (code, reason)):
            err().print(f"tracker replay: event {event_id} rejected ({code}): {reason}")
        return 1
    print(f"replay: {result.acked} of {total} events acknowledged; last seq {result.last_seq}")
    return 0


def _replay_kafka(args: argparse.Namespace, tf: TournamentFile, total: int) -> int:
    """``replay --broker``: 0 once a worker applied every event, 1 for a rejection, 3 when no verdict came in time."""
    from tracker.kafka.producer import replay_kafka

    security = kafka_security(args)
    found = asyncio.run(
        replay_kafka(
            tf,
            args.broker,
            security=security,
            wait=args.broker_wait,
            rate=args.rate,
            verdicts=args.verdict_wait,
            joining=args.worker_wait,
        )
    )
    where = f"produced {found.produced} events for {tf.opened.tournament} to {args.broker}"
    if args.verdict_wait <= 0:
        print(f"replay: {where} (not waiting for the workers' verdicts: --verdict-wait 0)")
        return 0
    for event_id, code, reason in found.rejected:
        err().print(f"tracker replay: event {event_id} rejected by a worker ({code}): {reason}", markup=False)
    if found.undecided:
        err().print(
            f"tracker replay: {where}, but no worker applied or rejected {len(found.undecided)} of them within "
            f"{args.verdict_wait:g} s (the first: {found.undecided[0]}; a worker had {args.worker_wait:g} s to join "
            "its group before that); they are in the results log and will be "
            "applied when a worker gets to them: is a worker running? (running the replay again is safe)",
            markup=False,
        )
        return 3
    if found.rejected:
        return 1
    print(f"replay: {where}; a worker applied all {found.applied} of {total} (last seq {found.last_seq})")
    return 0


def cmd_follow(args: argparse.Namespace) -> int:
    from tracker.follow import run_follow

    configure_logging(args.log_level, args.log_format, command=args.command)
    token = arbiter_token(args)
    return run_follow(
        args.source,
        args.tournament,
        url=args.url,
        token=token,
        broker=args.broker,
        interval=args.interval,
        once=args.once,
        security=kafka_security(args) if args.broker else None,
        broker_wait=args.broker_wait,
        override=args.override,
        board_interval=None if args.no_boards else args.board_interval,
        engine=args.engine,
        engine_nodes=args.engine_nodes,
        trust_voids=args.trust_voids,
        confirm_reads=args.confirm_reads,
        confirm_seconds=args.confirm_seconds,
        read_deadline=args.read_deadline,
        stream=args.stream,
    )


# -- distributed --------------------------------------------------------------------


def cmd_worker(args: argparse.Namespace) -> int:
    from tracker.kafka.worker import run_worker

    configure_logging(args.log_level, args.log_format, command=args.command)
    settings = WorkerSettings(
        args.broker,
        args.partitions,
        Path(args.data_dir) if args.data_dir else None,
        loglevel=args.log_level.upper(),
        security=kafka_security(args),
        broker_wait=args.broker_wait,
        wait_for_topics=args.wait_for_topics,
        health_host=args.health_host,
        health_port=args.health_port,
        stall_after=args.stall_seconds,
    )
    return run_worker(settings)


def cmd_cluster(args: argparse.Namespace) -> int:
    """``tracker cluster``: the test broker, a worker and two gateways until Ctrl-C (:mod:`tracker.cli.cluster`)."""
    from tracker.cli.cluster import ClusterSettings, run_cluster

    configure_logging(args.log_level, args.log_format, command=args.command)
    token = arbiter_token(args)
    if token and len(token) < MIN_TOKEN_LENGTH:
        raise TrackerError(say(words.TOKEN_SHORT(n=MIN_TOKEN_LENGTH), of(args)))
    for port in (args.port, args.port + 1) if args.port else (0,):  # the two gateways', before anything starts
        port_is_free(args.host, port, of(args))
    port_is_free(args.host, args.broker_port, of(args))
    settings = ClusterSettings(
        host=args.host,
        port=args.port,
        broker_port=args.broker_port,
        partitions=args.partitions,
        token=token,
        log_format=args.log_format,
    )
    return run_cluster(settings, sys.stdout)


def cmd_gateway(args: argparse.Namespace) -> int:
    from tracker.gateway.processes import cores
    from tracker.kafka.run import run_gateway

    configure_logging(args.log_level, args.log_format, command=args.command)
    port_is_free(args.host, args.port, of(args))
    security = kafka_security(args)
    config = server_config(args, data_dir=Path(args.data_dir or "."))
    return run_gateway(
        args.broker,
        config,
        security=security,
        wait=args.broker_wait,
        wait_for_topics=args.wait_for_topics,
        processes=args.processes if args.processes is not None else cores(),
    )
