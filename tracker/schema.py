"""JSON Schema of the websocket protocol v1 and of every event, generated from the code.

How this works
--------------

Client messages (:mod:`tracker.protocol`) and events
(:mod:`tracker.core.events`) are ``msgspec`` structs: their schemas come
straight from :func:`msgspec.json.schema`.  Server messages are
``TypedDict`` types in :mod:`tracker.protocol` (the builders there are typed
with them, so mypy holds the two together); ``tests/test_schema.py`` also
validates messages built by those functions and sent by a real gateway
against a closed copy of these schemas.

One correction is applied to msgspec's output: ``Decimal`` (scoring points)
is described by msgspec as a decimal string, but the wire encodes it as a
JSON number (``decimal_format="number"``) and the decoder accepts both; the
schema says so.  Descriptions are the types' docstrings.

``python -m tracker.schema DIR`` writes one file per message and per event
plus one per union (``client.json``, ``server.json``, ``event.json``);
``--check`` compares instead of writing and exits 1 when the files differ
from the code (CI runs it through ``tests/test_schema.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, get_args, get_type_hints

import msgspec

from tracker.core.events import (
    BoardUpdated,
    ByeRecorded,
    ByeVoided,
    PlayerWithdrawn,
    ResultCorrected,
    ResultRecorded,
    ResultVoided,
    TournamentOpened,
)
from tracker.protocol import (
    AckMessage,
    BoardsMessage,
    CueMessage,
    DeltaMessage,
    ErrorMessage,
    LiveMessage,
    NoticesMessage,
    ProjectionMessage,
    RejectedMessage,
    ScheduleMessage,
    SnapshotMessage,
    StakesMessage,
    Submit,
    Subscribe,
    Unsubscribe,
    UpdateMessage,
)

JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

SERVER_MESSAGES: Final[tuple[type, ...]] = (
    SnapshotMessage,
    UpdateMessage,
    DeltaMessage,
    AckMessage,
    RejectedMessage,
    ErrorMessage,
    ProjectionMessage,
    StakesMessage,
    CueMessage,
    ScheduleMessage,
    NoticesMessage,
    BoardsMessage,
    LiveMessage,
)
CLIENT_MESSAGES: Final[tuple[type, ...]] = (Subscribe, Unsubscribe, Submit)
EVENTS: Final[tuple[type, ...]] = (
    TournamentOpened,
    ResultRecorded,
    ResultCorrected,
    ResultVoided,
    ByeRecorded,
    ByeVoided,
    PlayerWithdrawn,
    BoardUpdated,
)

SchemaDict = dict[str, Any]


def _tag(cls: type) -> str:
    """The ``type`` value of a message or event class (its msgspec tag or its ``Literal``)."""
    if issubclass(cls, msgspec.Struct):
        tag = cls.__struct_config__.tag
        assert isinstance(tag, str), f"{cls.__name__} has no string tag"
        return tag
    (tag,) = get_args(get_type_hints(cls)["type"])
    assert isinstance(tag, str), f"{cls.__name__}.type is not a one-string Literal"
    return tag


def _file_tag(cls: type) -> str:
    """The part of a server message's schema file name after ``server-``: its tag (``update-delta`` for a delta)."""
    return "update-delta" if cls is DeltaMessage else _tag(cls)


def _fix(node: Any) -> Any:
    """Apply the correction of the module docstring to a schema, recursively."""
    if isinstance(node, list):
        return [_fix(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("type") == "string" and node.get("format") == "decimal":
        fixed: SchemaDict = {"anyOf": [{"type": "number"}, {"type": "string", "format": "decimal"}]}
        if "default" in node:
            number = float(node["default"])
            fixed["default"] = int(number) if number.is_integer() else number
        return fixed
    return {
        key: _unwrap(value) if key == "description" and isinstance(value, str) else _fix(value)
        for key, value in node.items()
    }


def _unwrap(text: str) -> str:
    """A docstring's lines joined into paragraphs: line breaks inside a paragraph become spaces."""
    return "\n\n".join(" ".join(part.split("\n")) for part in text.split("\n\n"))


def _document(title: str, description: str, body: SchemaDict) -> SchemaDict:
    return {"$schema": JSON_SCHEMA_DIALECT, "title": title, "description": description, **_fix(body)}


def _union(types: Sequence[type], title: str, description: str) -> SchemaDict:
    refs, components = msgspec.json.schema_components(types)
    mapping: dict[str, str] = {}
    for t, ref in zip(types, refs, strict=True):
        mapping.setdefault(_tag(t), ref["$ref"])  # a delta is an ``update`` too: ``delta: true`` tells them apart
    body: SchemaDict = {
        "anyOf": list(refs),
        "discriminator": {"propertyName": "type", "mapping": mapping},
        "$defs": components,
    }
    return _document(title, description, body)


def _single(cls: type, prefix: str) -> SchemaDict:
    schema = msgspec.json.schema(cls)
    tag = _tag(cls)
    definition = schema["$defs"][cls.__name__]
    description = definition.get("description", "")
    return _document(f"{prefix} {tag}", description.split("\n\n")[0].replace("\n", " "), schema)


def schemas() -> dict[str, SchemaDict]:
    """Every schema document, by file name (``"server-update.json"`` …), in a stable order.

    Returns plain JSON values (draft 2020-12).  Raises nothing for the types
    tracker defines; a type msgspec cannot describe would raise ``TypeError``
    here, which is the point: the protocol must stay describable.
    """
    out: dict[str, SchemaDict] = {
        "client.json": _union(CLIENT_MESSAGES, "client message", "Any message a client sends on /ws (protocol v1.1)."),
        "server.json": _union(
            SERVER_MESSAGES, "server message", "Any message the server sends on /ws (protocol v1.1)."
        ),
        "event.json": _union(
            EVENTS,
            "event",
            "Any event, as submitted on /ws: stored in the results log, but board_updated (a game in progress) "
            "is kept apart.",
        ),
    }
    for cls in CLIENT_MESSAGES:
        out[f"client-{_tag(cls)}.json"] = _single(cls, "client message")
    for cls in SERVER_MESSAGES:
        out[f"server-{_file_tag(cls)}.json"] = _single(cls, "server message")
    for cls in EVENTS:
        out[f"event-{_tag(cls)}.json"] = _single(cls, "event")
    return out


def render(schema: SchemaDict) -> str:
    """The text a schema file holds: indented JSON, UTF-8 characters kept, one final newline."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def _is_ours(name: str) -> bool:
    return name.endswith(".json") and name.split("-")[0].removesuffix(".json") in ("client", "server", "event")


def stale_files(directory: Path) -> list[str]:
    """Names of files in ``directory`` that differ from the generated ones, are missing, or are left over.

    Returns an empty list when the directory is up to date.  Raises
    ``OSError`` only for a directory that exists but cannot be read.
    """
    expected = {name: render(schema) for name, schema in schemas().items()}
    present = {p.name for p in directory.glob("*.json")} if directory.is_dir() else set()
    differing = [
        name
        for name, text in expected.items()
        if name not in present or (directory / name).read_text(encoding="utf-8") != text
    ]
    leftover = [name for name in present if name not in expected and _is_ours(name)]
    return sorted(differing + leftover)


def write(directory: Path) -> list[str]:
    """Write every schema file into ``directory`` (created if needed) and remove left-over ones.

    Returns the names of the files written.  Raises ``OSError`` when the
    directory cannot be written.
    """
    directory.mkdir(parents=True, exist_ok=True)
    generated = schemas()
    for name, schema in generated.items():
        (directory / name).write_text(render(schema), encoding="utf-8")
    for path in directory.glob("*.json"):
        if path.name not in generated and _is_ours(path.name):
            path.unlink()
    return list(generated)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tracker.schema [--check] DIR``; returns the exit code (1: files out of date)."""
    p = argparse.ArgumentParser(
        prog="python -m tracker.schema", description=__doc__.split("\n\n")[0] if __doc__ else ""
    )
    p.add_argument("directory", nargs="?", default="docs/schema")
    p.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 when out of date")
    args = p.parse_args(argv)
    directory = Path(args.directory)
    if args.check:
        stale = stale_files(directory)
        for name in stale:
            print(f"{directory / name}: out of date (run python -m tracker.schema {directory})", file=sys.stderr)
        return 1 if stale else 0
    names = write(directory)
    print(f"wrote {len(names)} schema files to {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
