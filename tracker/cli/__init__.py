"""The ``tracker`` command: the only place that reads argv and the environment.

Each sub-command builds one frozen configuration and hands it to the shell
(:mod:`tracker.embedded`, :mod:`tracker.kafka`) or, for ``standings``, folds a
file through the core and prints the result.  Errors a user can fix (a bad
file, a rejected event, a server that cannot be reached) are printed as one
sentence and exit non-zero, never as a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from functools import partial
from typing import Final

from tracker import DISTRIBUTION, __version__
from tracker.cli.commands import (
    cmd_check,
    cmd_cluster,
    cmd_follow,
    cmd_gateway,
    cmd_new,
    cmd_replay,
    cmd_standings,
    cmd_up,
    cmd_worker,
    err,
)
from tracker.cli.logs import json_line, log_options
from tracker.cli.parsers import VERSION, Parser
from tracker.cli.words import argv_language, asked_language, chosen, say
from tracker.config import STALL_AFTER, Limits, ServerConfig
from tracker.core.errors import EventRejected, TrackerError
from tracker.core.events import RULES
from tracker.core.phrases import phrase
from tracker.i18n.catalogue import Catalogue

# -- argument parsing ------------------------------------------------------------
#
# Every help is a phrase, said in the parser's language (tracker.cli.parsers): ``cli.help.COMMAND.OPTION`` for a
# command's own option, ``cli.help.OPTION`` for one several commands share.


def _token_file_option(p: Parser) -> None:
    p.add_argument(
        "--token-file",
        metavar="PATH",
        help=p.help(phrase("cli.help.token_file", "read the arbiter token from this file (not visible in ps)")),
    )


def _server_options(p: Parser, *, port: int = 8080) -> None:
    p.add_argument(
        "--port", type=int, default=port, help=p.help(phrase("cli.help.port", "TCP port (0 picks a free one)"))
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--token", help=p.help(TOKEN_GENERATED))
    _token_file_option(p)
    p.add_argument(
        "--allow-origin",
        action="append",
        help=p.help(phrase("cli.help.allow_origin", "browser origin allowed to open websockets (repeatable)")),
    )
    p.add_argument(
        "--max-frame",
        type=int,
        default=Limits().max_frame,
        help=p.help(phrase("cli.help.max_frame", "largest websocket message in bytes")),
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=Limits().max_connections,
        help=p.help(phrase("cli.help.max_connections", "websockets in total")),
    )
    p.add_argument(
        "--max-connections-per-address",
        type=int,
        default=Limits().max_connections_per_address,
        help=p.help(
            phrase(
                "cli.help.max_connections_per_address",
                "websockets from one client address (an IPv6 /64 counts as one); beyond, closed with 1008",
            )
        ),
    )
    p.add_argument(
        "--max-buffer",
        type=int,
        default=Limits().max_buffer,
        help=p.help(phrase("cli.help.max_buffer", "unsent bytes per subscriber before it is dropped")),
    )
    p.add_argument(
        "--max-subscriptions",
        type=int,
        default=Limits().max_subscriptions,
        help=p.help(phrase("cli.help.max_subscriptions", "tournaments per connection")),
    )
    p.add_argument(
        "--max-resume-bytes",
        type=int,
        default=Limits().max_resume,
        help=p.help(
            phrase(
                "cli.help.max_resume_bytes",
                "bytes of missed updates a resume replays; beyond, the client gets a snapshot",
            )
        ),
    )
    p.add_argument(
        "--submits-per-second",
        type=float,
        default=Limits().submits_per_second,
        help=p.help(phrase("cli.help.submits_per_second", "per token, sustained")),
    )
    p.add_argument(
        "--submit-burst",
        type=int,
        default=Limits().submit_burst,
        help=p.help(phrase("cli.help.submit_burst", "per token, burst")),
    )
    p.add_argument(
        "--projection-seconds",
        type=float,
        default=Limits().projection_seconds,
        help=p.help(phrase("cli.help.projection_seconds", "an arbiter projection running longer is stopped")),
    )
    p.add_argument(
        "--projection-search-seconds",
        type=float,
        default=Limits().projection_search_seconds,
        help=p.help(
            phrase(
                "cli.help.projection_search_seconds",
                "the exact search's own time within --projection-seconds (default: what a reserve for the bounds "
                "leaves; 0: no search, the bounds said cut short)",
            )
        ),
    )
    p.add_argument(
        "--projection-memory",
        type=int,
        default=Limits().projection_memory,
        help=p.help(
            phrase("cli.help.projection_memory", "address space of a projection worker process in bytes (0: unlimited)")
        ),
    )
    p.add_argument(
        "--stale-after",
        type=float,
        default=ServerConfig().stale_after,
        metavar="SECONDS",
        help=p.help(
            phrase(
                "cli.help.stale_after",
                "a board (game in progress) its source has not sent again for this long is marked stale",
            )
        ),
    )
    p.add_argument("--no-durability", action="store_true", help=argparse.SUPPRESS)


ROUND_FORM: Final = phrase("cli.after_round.form", "{text} is not a round number")
ROUND_NEGATIVE: Final = phrase("cli.after_round.negative", "a round number is 0 (before round 1) or more, not {value}")
PROCESSES_FORM: Final = phrase("cli.processes.form", "{text} is not a number of processes")
PROCESSES_FEW: Final = phrase("cli.processes.few", "a gateway runs at least 1 process, not {value}")
PASSWORD_REFUSED: Final = phrase(
    "cli.kafka_password.refused",
    "the Kafka password is never given on the command line: use --kafka-password-file or TRACKER_KAFKA_PASSWORD",
)
TOKEN_GENERATED: Final = phrase(
    "cli.help.token.generated", "arbiter token (default: $TRACKER_TOKEN, else one is generated and printed)"
)
TOKEN: Final = phrase("cli.help.token", "arbiter token (default: $TRACKER_TOKEN)")
URL: Final = phrase("cli.help.url", "ws://HOST:PORT/ws of a tracker or gateway")
BROKER_DIRECT: Final = phrase("cli.help.broker.direct", "kafka://HOST:PORT to produce to the results topic directly")
BROKER: Final = phrase("cli.help.broker", "kafka://HOST:PORT")
TIEBREAKS: Final = phrase("cli.help.tiebreaks", "e.g. KS,KS/L-2,SB or PTS,STD,TPN,RTNG (TRF26 202 syntax)")


def _after_round(text: str, lang: Catalogue) -> int:
    """``--after-round``: a round number, or 0 for the start list; anything else is refused with a sentence."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(say(ROUND_FORM(text=repr(text)), lang)) from None
    if value < 0:
        raise argparse.ArgumentTypeError(say(ROUND_NEGATIVE(value=value), lang))
    return value


def _processes(text: str, lang: Catalogue) -> int:
    """``--processes``: a count of at least 1; anything else is refused with a sentence."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(say(PROCESSES_FORM(text=repr(text)), lang)) from None
    if value < 1:
        raise argparse.ArgumentTypeError(say(PROCESSES_FEW(value=value), lang))
    return value


def _rules_option(p: Parser) -> None:
    p.add_argument(
        "--rules",
        choices=RULES,
        help=p.help(
            phrase(
                "cli.help.rules",
                "the FIDE C.07 edition (default: the TRF's 042 start date says, 2024 before 1 March 2026; else 2026)",
            )
        ),
    )


class _RefusePassword(argparse.Action):
    """``--kafka-password`` exists only to be refused (argparse would read it as ``--kafka-password-file``)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        parser.error(parser.say(PASSWORD_REFUSED) if isinstance(parser, Parser) else PASSWORD_REFUSED.english)


def _kafka_options(p: Parser, *, topics: bool = False) -> None:
    """TLS, SASL and patience: the same on every command that talks to Kafka."""
    g = p.add_argument_group(p.say(phrase("cli.help.kafka", "Kafka connection (TLS and SASL)")))
    g.add_argument(
        "--kafka-security",
        choices=("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
        default="PLAINTEXT",
        help=p.help(phrase("cli.help.kafka.security", "the listener's security protocol (default PLAINTEXT)")),
    )
    g.add_argument(
        "--kafka-sasl-mechanism",
        choices=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"),
        help=p.help(phrase("cli.help.kafka.sasl_mechanism", "with SASL_*")),
    )
    g.add_argument("--kafka-user", metavar="NAME", help=p.help(phrase("cli.help.kafka.user", "SASL user name")))
    g.add_argument(
        "--kafka-password-file",
        metavar="PATH",
        help=p.help(
            phrase(
                "cli.help.kafka.password_file",
                "read the SASL password from this file's first line (default: $TRACKER_KAFKA_PASSWORD; never argv)",
            )
        ),
    )
    g.add_argument("--kafka-password", action=_RefusePassword, nargs="?", help=argparse.SUPPRESS)
    g.add_argument(
        "--kafka-token-file",
        metavar="PATH",
        help=p.help(
            phrase(
                "cli.help.kafka.token_file",
                "OAUTHBEARER: the bearer token, the file's first line, read again whenever the file changes",
            )
        ),
    )
    g.add_argument(
        "--kafka-ca-file",
        metavar="PATH",
        help=p.help(phrase("cli.help.kafka.ca_file", "PEM CA bundle the broker's TLS certificate is checked with")),
    )
    g.add_argument(
        "--kafka-cert-file",
        metavar="PATH",
        help=p.help(
            phrase("cli.help.kafka.cert_file", "PEM client certificate for a listener that asks for one (mTLS)")
        ),
    )
    g.add_argument(
        "--kafka-key-file",
        metavar="PATH",
        help=p.help(
            phrase("cli.help.kafka.key_file", "PEM private key of --kafka-cert-file (unless the key is in it)")
        ),
    )
    g.add_argument(
        "--broker-wait",
        type=float,
        default=5.0,
        metavar="S",
        help=p.help(
            phrase("cli.help.broker_wait", "seconds to wait for the broker to answer before giving up (default 5)")
        ),
    )
    if topics:
        g.add_argument(
            "--wait-for-topics",
            type=float,
            metavar="S",
            help=p.help(
                phrase(
                    "cli.help.wait_for_topics",
                    "create no topics: wait up to S seconds for the topic job to create them, then exit with an error",
                )
            ),
        )


def _encoding_option(p: Parser) -> None:
    p.add_argument(
        "--encoding",
        choices=["latin-1", "utf-8"],
        default="latin-1",
        help=p.help(
            phrase(
                "cli.help.encoding",
                "the TRF's encoding: latin-1 (the default, as the FIDE TEC server reads TRF; names Latin-1 cannot "
                "hold transliterated, Ł → L) or utf-8 (names as they are)",
            )
        ),
    )


def parser(lang: Catalogue | None = None) -> Parser:
    """The ``tracker`` command line, its help and refusals in ``lang`` (English when none is given)."""
    top = Parser(prog="tracker", lang=lang)
    top.description = top.say(phrase("cli.help.tracker", "Live Koya tie-breaks for round-robin chess events."))
    top.add_argument(
        "--version",
        action="version",
        version=f"tracker {__version__} ({DISTRIBUTION})",
        help=top.help(VERSION),
    )
    sub = top.add_subparsers(dest="command", required=True)
    lang = top.lang

    p = sub.add_parser(
        "standings",
        help=top.help(phrase("cli.help.command.standings", "print the standings of a TRF or PGN file")),
        lang=lang,
    )
    p.add_argument("file")
    p.add_argument(
        "--after-round",
        type=partial(_after_round, lang=lang),
        metavar="N",
        help=p.help(phrase("cli.help.standings.after_round", "the standings after round N (0: before round 1)")),
    )
    p.add_argument(
        "--final",
        action="store_true",
        help=p.help(
            phrase(
                "cli.help.standings.final",
                "the event is over: read a paired game with a blank result as unplayed (0 points) in every round, "
                "not only before the last round with results",
            )
        ),
    )
    p.add_argument("--tiebreaks", metavar="CODES", help=p.help(TIEBREAKS))
    _rules_option(p)
    p.add_argument("--basis", choices=["games", "rounds"])
    p.add_argument("--provisional", choices=["percentage", "max-games", "rounds"])
    p.add_argument("--format", choices=["table", "json", "trf"], default="table")
    _encoding_option(p)
    p.add_argument(
        "--project",
        action="store_true",
        help=p.help(phrase("cli.help.standings.project", "also print what the remaining games can change")),
    )
    p.add_argument(
        "--lines",
        metavar="PLACES",
        help=p.help(
            phrase(
                "cli.help.standings.lines",
                "places that matter, e.g. 1,3 (1st, top 3): clinched/eliminated/open each",
            )
        ),
    )
    p.add_argument(
        "--playoff",
        action="store_true",
        help=p.help(phrase("cli.help.standings.playoff", "a tie for 1st on points goes to a play-off")),
    )
    p.add_argument(
        "--prizes",
        metavar="P1,P2,…",
        help=p.help(
            phrase(
                "cli.help.standings.prizes",
                "prize money per place from the 1st, e.g. 1000,600,400 (default: the tournament's own, if declared)",
            )
        ),
    )
    p.add_argument(
        "--sharing",
        choices=["none", "average", "hort"],
        help=p.help(
            phrase(
                "cli.help.standings.sharing",
                "how players equal on points share prizes: none (tie-breaks decide), average, hort (half each way; "
                "the default unless the tournament declares its own)",
            )
        ),
    )
    p.add_argument(
        "--category",
        action="append",
        metavar="NAME:RULE:P1,…",
        help=p.help(
            phrase(
                "cli.help.standings.category",
                "prize money per place of a category, repeatable: RULE is rating<N (start list rating), sex=w, "
                "sex=m or age<N (on the start date), e.g. U2000:rating<2000:300,150; one prize per player",
            )
        ),
    )
    p.add_argument(
        "--worth",
        action="store_true",
        help=p.help(
            phrase(
                "cli.help.standings.worth",
                "after the table, what results are worth: each player's rating change so far and performance, the "
                "title norms in play, and with prizes the money (paid, or the least and most still possible)",
            )
        ),
    )
    p.set_defaults(run=cmd_standings)

    p = sub.add_parser(
        "check",
        help=top.help(
            phrase(
                "cli.help.command.check",
                "audit a TRF's official standings (rank column, XXT tie-break values) against tracker's computation",
            )
        ),
        lang=lang,
    )
    p.add_argument("file")
    _rules_option(p)
    p.add_argument(
        "--final",
        action="store_true",
        help=p.help(phrase("cli.help.check.final", "the event is over: a paired game with a blank result is unplayed")),
    )
    p.add_argument(
        "--tiebreaks",
        metavar="CODES",
        help=p.help(phrase("cli.help.check.tiebreaks", "the event's order when the file names none (202/212)")),
    )
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser(
        "new",
        help=top.help(
            phrase(
                "cli.help.command.new",
                "write the TRF of a round robin from a start list (CSV or text) with FIDE's Berger tables as its "
                "schedule",
            )
        ),
        lang=lang,
    )
    p.add_argument(
        "players",
        metavar="FILE",
        help=p.help(
            phrase("cli.help.new.players", "the players in pairing-number order: a .csv with a header, or text")
        ),
    )
    p.add_argument(
        "--name", help=p.help(phrase("cli.help.new.name", "the tournament's name (default: the file's name)"))
    )
    p.add_argument(
        "--cycles",
        type=int,
        choices=(1, 2),
        default=1,
        help=p.help(phrase("cli.help.new.cycles", "1: single round robin, 2: double")),
    )
    p.add_argument(
        "--tiebreaks",
        metavar="CODES",
        help=p.help(phrase("cli.help.new.tiebreaks", "the order after PTS, e.g. DE,SB,KS,WON (the default)")),
    )
    p.add_argument(
        "--boards",
        type=int,
        default=0,
        metavar="N",
        help=p.help(
            phrase(
                "cli.help.new.boards",
                "a team start list (a team column, or 'Team:' headings): boards per match (default: the smallest team)",
            )
        ),
    )
    _rules_option(p)
    p.add_argument(
        "--start-date",
        metavar="YYYY/MM/DD",
        help=p.help(phrase("cli.help.new.start_date", "written as record 042 (it also says the C.07 edition)")),
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help=p.help(phrase("cli.help.new.output", "write the TRF here (default: standard output)")),
    )
    _encoding_option(p)
    p.set_defaults(run=cmd_new)

    p = sub.add_parser(
        "up",
        help=top.help(phrase("cli.help.command.up", "run the embedded tracker: journal, processor, gateway, pages")),
        lang=lang,
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help=p.help(phrase("cli.help.up.demo", "replay a bundled real tournament at a watchable pace")),
    )
    p.add_argument(
        "--data-dir",
        help=p.help(
            phrase("cli.help.up.data_dir", "where the journal lives (default ./data; a fresh temp dir with --demo)")
        ),
    )
    p.add_argument(
        "--rate",
        type=float,
        help=p.help(
            phrase(
                "cli.help.up.rate",
                "demo pace in results per second after the first rounds (default 0.2: one every 5 s)",
            )
        ),
    )
    _server_options(p)
    log_options(p)
    p.set_defaults(run=cmd_up)

    p = sub.add_parser(
        "replay",
        help=top.help(phrase("cli.help.command.replay", "submit a TRF/PGN file's results to a running tracker")),
        lang=lang,
    )
    p.add_argument("file")
    p.add_argument(
        "--tournament",
        metavar="ID",
        help=p.help(phrase("cli.help.replay.tournament", "tournament id (default: slug of the event name)")),
    )
    p.add_argument("--url", help=p.help(URL))
    p.add_argument("--token", help=p.help(TOKEN))
    _token_file_option(p)
    p.add_argument("--broker", help=p.help(BROKER_DIRECT))
    p.add_argument("--rate", type=float, metavar="EVENTS_PER_S")
    p.add_argument(
        "--verdict-wait",
        type=float,
        default=30.0,
        metavar="S",
        help=p.help(
            phrase(
                "cli.help.replay.verdict_wait",
                "with --broker: seconds to wait for a worker to apply or reject every event (0: produce only)",
            )
        ),
    )
    p.add_argument(
        "--worker-wait",
        type=float,
        default=60.0,
        metavar="S",
        help=p.help(
            phrase(
                "cli.help.replay.worker_wait",
                "with --broker: the --verdict-wait starts once a worker has joined its group; wait up to S seconds "
                "for that (a worker just started takes a few; default 60)",
            )
        ),
    )
    _kafka_options(p)
    p.set_defaults(run=cmd_replay)

    p = sub.add_parser(
        "follow",
        help=top.help(
            phrase("cli.help.command.follow", "watch a live PGN source or a TRF file and submit what changes")
        ),
        lang=lang,
    )
    p.add_argument(
        "source", help=p.help(phrase("cli.help.follow.source", "http(s) URL of a PGN, or a local .pgn/.trf file"))
    )
    p.add_argument("--tournament", metavar="ID", required=True)
    p.add_argument("--url", help=p.help(URL))
    p.add_argument("--token", help=p.help(TOKEN))
    _token_file_option(p)
    p.add_argument("--broker", help=p.help(BROKER_DIRECT))
    p.add_argument(
        "--interval",
        type=float,
        default=5.0,
        metavar="S",
        help=p.help(phrase("cli.help.follow.interval", "seconds between polls")),
    )
    p.add_argument(
        "--once",
        action="store_true",
        help=p.help(phrase("cli.help.follow.once", "read the source once, submit what changed, exit")),
    )
    p.add_argument(
        "--override",
        action="store_true",
        help=p.help(
            phrase(
                "cli.help.follow.override",
                "replace entries follow did not make (an arbiter's) when the source disagrees; "
                "without it they are reported as conflicts and left as they are",
            )
        ),
    )
    p.add_argument(
        "--board-interval",
        type=float,
        default=2.0,
        metavar="S",
        help=p.help(
            phrase(
                "cli.help.follow.board_interval",
                "a live PGN's games in progress are sent as boards, at most one per game per S seconds (default 2)",
            )
        ),
    )
    p.add_argument(
        "--no-boards",
        action="store_true",
        help=p.help(phrase("cli.help.follow.no_boards", "send results only, no boards of games in progress")),
    )
    p.add_argument(
        "--engine",
        metavar="PATH",
        help=p.help(
            phrase(
                "cli.help.follow.engine",
                "a UCI engine (e.g. /usr/games/stockfish) to evaluate the positions the source gives no [%eval] for",
            )
        ),
    )
    p.add_argument(
        "--engine-nodes",
        type=int,
        default=150_000,
        metavar="N",
        help=p.help(phrase("cli.help.follow.engine_nodes", "nodes the engine searches per position")),
    )
    p.add_argument(
        "--trust-voids",
        action="store_true",
        help=p.help(
            phrase(
                "cli.help.follow.trust_voids",
                "void what the source voids (once confirmed); without it a void is a notice on the arbiters' desk",
            )
        ),
    )
    p.add_argument(
        "--confirm-reads",
        type=int,
        default=3,
        metavar="N",
        help=p.help(
            phrase(
                "cli.help.follow.confirm_reads",
                "a result gone or changed at the source is acted on after N consecutive whole reads say so (default 3)",
            )
        ),
    )
    p.add_argument(
        "--confirm-seconds",
        type=float,
        default=5.0,
        metavar="S",
        help=p.help(phrase("cli.help.follow.confirm_seconds", "... spanning at least S seconds (default 5)")),
    )
    p.add_argument(
        "--read-deadline",
        type=float,
        default=20.0,
        metavar="S",
        help=p.help(
            phrase(
                "cli.help.follow.read_deadline",
                "an HTTP source's whole read (connect, headers, body) must end within S seconds (default 20)",
            )
        ),
    )
    p.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=p.help(
            phrase(
                "cli.help.follow.stream",
                "read the URL as a stream that stays open and sends each game's PGN as it changes (lichess's round "
                "stream); default: when the URL's path has a 'stream' segment",
            )
        ),
    )
    _kafka_options(p)
    log_options(p, level="info")
    p.set_defaults(run=cmd_follow)

    p = sub.add_parser(
        "worker",
        help=top.help(phrase("cli.help.command.worker", "run a Faust worker (distributed deployment)")),
        lang=lang,
    )
    p.add_argument("--broker", required=True, help=p.help(BROKER))
    p.add_argument(
        "--partitions",
        type=int,
        help=p.help(
            phrase(
                "cli.help.worker.partitions",
                "partitions of the topics it creates (default 8); with --wait-for-topics, the count they must have",
            )
        ),
    )
    p.add_argument(
        "--data-dir", default=None, help=p.help(phrase("cli.help.worker.data_dir", "Faust table data directory"))
    )
    h = p.add_argument_group(p.say(phrase("cli.help.health", "health (/healthz, /readyz, /metrics)")))
    h.add_argument(
        "--health-port",
        type=int,
        metavar="PORT",
        help=p.help(phrase("cli.help.health.port", "serve the health endpoints here (default: none)")),
    )
    h.add_argument(
        "--health-host",
        default="127.0.0.1",
        help=p.help(phrase("cli.help.health.host", "address of the health endpoints (default 127.0.0.1)")),
    )
    h.add_argument(
        "--stall-seconds",
        type=float,
        default=STALL_AFTER,
        metavar="S",
        help=p.help(
            phrase(
                "cli.help.health.stall_seconds",
                "/healthz fails when a partition with records to apply has not moved for S seconds (default 60)",
            )
        ),
    )
    log_options(p)  # info shows rebalances and recovery
    _kafka_options(p, topics=True)
    p.set_defaults(run=cmd_worker)

    p = sub.add_parser(
        "gateway",
        help=top.help(phrase("cli.help.command.gateway", "run a websocket gateway fed by the standings topic")),
        lang=lang,
    )
    p.add_argument("--broker", required=True, help=p.help(BROKER))
    p.add_argument("--data-dir", default=None)
    p.add_argument(
        "--processes",
        type=partial(_processes, lang=lang),
        metavar="N",
        help=p.help(
            phrase(
                "cli.help.gateway.processes",
                "gateway processes serving the one port, each following the topics itself (default: the cores)",
            )
        ),
    )
    _server_options(p)
    log_options(p)
    _kafka_options(p, topics=True)
    p.set_defaults(run=cmd_gateway)

    p = sub.add_parser(
        "cluster",
        help=top.help(
            phrase(
                "cli.help.command.cluster",
                "the distributed deployment on this machine: the test broker, one worker, two gateways",
            )
        ),
        lang=lang,
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument(
        "--port",
        type=int,
        default=8080,
        help=p.help(phrase("cli.help.cluster.port", "the first gateway's port; the second takes the next (0: free)")),
    )
    p.add_argument(
        "--broker-port",
        type=int,
        default=0,
        metavar="PORT",
        help=p.help(phrase("cli.help.cluster.broker_port", "the broker's port (default: a free one)")),
    )
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--token", help=p.help(TOKEN_GENERATED))
    _token_file_option(p)
    log_options(p)
    p.set_defaults(run=cmd_cluster)
    for command in sub.choices.values():
        assert isinstance(command, Parser)
        _language_option(command, default=argparse.SUPPRESS)  # not given: the top's (``tracker --lang ru …``)
    _language_option(top, default=None, shown=False)  # documented on each command, where it is read
    return top


def _language_option(p: Parser, *, default: object, shown: bool = True) -> None:
    p.add_argument(
        "--lang",
        type=lambda text: asked_language(text, os.environ),
        metavar="CODE",
        default=default,
        help=p.help(
            phrase(
                "cli.help.lang",
                "the language of the tables and sentences: en, ru, es, de or fr (default: $LANG's, else English; "
                "JSON is always English)",
            )
        )
        if shown
        else argparse.SUPPRESS,
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser(argv_language(argv, os.environ)).parse_args(argv)
    args.language = chosen(args.lang, os.environ)
    try:
        code: int = args.run(args)
    except EventRejected as exc:  # the core's sentence, in the chosen language when it is a phrase
        _fail(args, str(say(exc.said, args.language) if exc.said else exc))
        return 1
    except TrackerError as exc:
        _fail(args, str(exc))
        return 1
    except BrokenPipeError:  # the reader left (``tracker standings … | head``): nothing to say, as cat says nothing
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush at exit must not fail again
        return 1  # as rich does for the tables (Console.on_broken_pipe)
    except OSError as exc:
        _fail(args, str(exc))
        return 1
    except KeyboardInterrupt:
        return 130
    return code


def _fail(args: argparse.Namespace, sentence: str) -> None:
    """The sentence a command ends with, on stderr: ``tracker CMD: …``, or a JSON record with ``--log-format json``."""
    if getattr(args, "log_format", "text") == "json":
        sys.stderr.write(json_line(f"tracker.{args.command}", logging.ERROR, sentence) + "\n")
        sys.stderr.flush()
    else:
        err().print(f"tracker {args.command}: {sentence}", markup=False)


if __name__ == "__main__":
    sys.exit(main())
