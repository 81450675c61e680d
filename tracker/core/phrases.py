"""Sentences as data: each sentence tracker says is a :class:`Phrase` (a key and its English), said with arguments.

How this works
--------------

A :class:`Phrase` is a template in English with named arguments,
``"{white:player}–{black:player} {result:result} (round {round})"``, under a
stable key (``"summary.recorded"``).  Saying it gives a :class:`Said`: the key
and the arguments as plain values (start numbers, result codes, exact
points), which travels on the wire beside the English text so that a client
renders it in its viewer's language; :func:`render` writes it in English, or
in any :class:`Language` a catalogue provides (:mod:`tracker.i18n`).  The
pages render with the same rules (``web/i18n.js``).

The phrases themselves are the English source of the gettext catalogues: an
extraction (``make i18n``) reads every ``Phrase(...)`` and ``Plural(...)`` of
the code, the key as the message context and the English as the message id.

An argument is written ``{name}`` (an integer or a string, as it is) or
``{name:type}``:

``player``  a start number, written as the player's short name (the surname)
``players`` start numbers, written as a list in the language's way ("A and B")
``list``    numbers or words, written as a list in the language's way ("3 and 8")
``result``  a game's result code (``"1-0"``, ``"+-"``), written ``1–0``, ``+/−``
``points``  a number of points, written as the language writes them (``2½``)
``signed``  points with their sign (``+½``, ``−1``)
``line``    a line of the standings: its places (an integer: "1st", "top 3")
            or the name the tournament declared for it (a string, untouched)
``phrase``  another phrase said (a sentence inside a sentence), written in the same language
``phrases`` phrases said, written one after the other with ``"; "`` (:data:`SEMICOLON`)

A :class:`Plural` has one template per plural form of a language (English:
one and other) and chooses by its argument ``n``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import gcd
from typing import Any, Final, Protocol, TypeVar, Union

import msgspec

#: What an argument may be on the wire (a phrase inside a phrase is said whole: ``{"key", "args"}``).
Arg = Union[int, float, str, list[int], list[str], None, "Said", list["Said"]]

_FIELD: Final = re.compile(r"\{(\w+)(?::(\w+))?\}")
TYPES: Final = frozenset({"player", "players", "list", "result", "points", "signed", "line", "phrase", "phrases"})


class Said(msgspec.Struct, frozen=True, omit_defaults=True):
    """A phrase said: its key and its arguments (``{"key": "summary.voided", "args": {"white": 3, …}}``)."""

    key: str
    args: dict[str, Any] = {}  # Arg values (typed loosely: a decoder cannot tell two kinds of list apart)


@dataclass(frozen=True, slots=True)
class Phrase:
    """One sentence (or part of one) under a stable key, in English (see the module docstring)."""

    key: str
    english: str

    def __call__(self, **args: Arg) -> Said:
        return Said(self.key, args)

    @property
    def forms(self) -> tuple[str, ...]:
        return (self.english,)


@dataclass(frozen=True, slots=True)
class Plural:
    """A phrase whose words follow a number: its argument ``n`` chooses the form."""

    key: str
    one: str
    other: str

    def __call__(self, **args: Arg) -> Said:
        return Said(self.key, args)

    @property
    def forms(self) -> tuple[str, ...]:
        return (self.one, self.other)


class Language(Protocol):
    """What :func:`render` needs of a language: its templates, plural rule, numbers and lists."""

    def forms(self, key: str) -> Sequence[str] | None:
        """The templates of ``key`` (one, or one per plural form), or ``None`` when the language lacks it."""
        ...

    def plural(self, n: int) -> int:
        """Which of a plural phrase's forms ``n`` takes."""
        ...

    def points(self, value: Fraction) -> str: ...

    def join(self, items: Sequence[str]) -> str: ...


#: Every phrase defined, by key (a phrase registers itself by being defined with :func:`phrase` or :func:`plural`).
PHRASES: dict[str, Phrase | Plural] = {}


def phrase(key: str, english: str) -> Phrase:
    """Define a phrase (once per key) and register it for :func:`render`'s English."""
    return _register(Phrase(key, english))


def plural(key: str, one: str, other: str) -> Plural:
    """Define a plural phrase (once per key); its argument ``n`` chooses the form."""
    return _register(Plural(key, one, other))


_P = TypeVar("_P", Phrase, Plural)


def _register(p: _P) -> _P:
    if p.key in PHRASES and PHRASES[p.key] != p:
        raise ValueError(f"phrase {p.key!r} is defined twice")
    for form in p.forms:
        for _, kind in _FIELD.findall(form):
            if kind and kind not in TYPES:
                raise ValueError(f"phrase {p.key!r}: unknown argument type {kind!r}")
    PHRASES[p.key] = p
    return p


LINE_FIRST: Final = phrase("line.first", "1st")
LINE_TOP: Final = phrase("line.top", "top {n}")
#: How the phrases of a ``phrases`` argument follow each other.
SEMICOLON: Final = phrase("list.semicolon", "{first}; {next}")


class English:
    """The language of the code's own templates: tracker's English, as it has always written it."""

    def forms(self, key: str) -> Sequence[str] | None:
        p = PHRASES.get(key)
        return None if p is None else p.forms

    def plural(self, n: int) -> int:
        return 0 if n == 1 else 1

    def points(self, value: Fraction) -> str:
        return format_points(value)

    def join(self, items: Sequence[str]) -> str:
        if len(items) <= 2:
            return " and ".join(items)
        return ", ".join(items[:-1]) + " and " + items[-1]


ENGLISH: Final = English()


def render(said: Said, names: Callable[[int], str], language: Language = ENGLISH) -> str:
    """``said`` in ``language`` (English when the language lacks its key); ``names`` gives a start number's name."""
    forms = language.forms(said.key)
    if not forms:
        language, forms = ENGLISH, ENGLISH.forms(said.key)
        if not forms:
            raise KeyError(f"no phrase {said.key!r}")
    template = forms[0]
    p = PHRASES.get(said.key)
    if len(forms) > 1 and isinstance(p, Plural):
        count = said.args.get("n")
        index = language.plural(count if isinstance(count, int) else 0)
        template = forms[min(index, len(forms) - 1)]
    return fill(template, said.args, names, language)


def fill(template: str, args: Mapping[str, Arg], names: Callable[[int], str], language: Language) -> str:
    """``template`` with its arguments written (the mini-language of the module docstring)."""
    segments = _compiled.get(template)
    if segments is None:
        segments = _compile(template)
    out: list[str] = []
    for text, name, kind in segments:
        out.append(text)
        if name is not None:
            if name not in args:
                raise KeyError(f"argument {name!r} missing for {template!r}")
            out.append(_written(args[name], kind, names, language))
    return "".join(out)


#: Each template seen, as its segments: ``(text before a field, the field's name, its type)``, the last one's name
#: ``None`` (the text after the last field).  Parsed once: a worker renders several phrases per result.
_compiled: Final[dict[str, tuple[tuple[str, str | None, str | None], ...]]] = {}


def _compile(template: str) -> tuple[tuple[str, str | None, str | None], ...]:
    segments: list[tuple[str, str | None, str | None]] = []
    at = 0
    for match in _FIELD.finditer(template):
        segments.append((template[at : match.start()], match.group(1), match.group(2)))
        at = match.end()
    segments.append((template[at:], None, None))
    if len(_compiled) < 4096:  # templates come from the catalogues: a few hundred
        _compiled[template] = tuple(segments)
    return tuple(segments)


def _written(value: Arg, kind: str | None, names: Callable[[int], str], language: Language) -> str:
    if kind is None:  # the match below would try every typed case first
        return "" if value is None else str(value)
    if kind == "player" and type(value) is int:  # most fields of a summary
        return names(value)
    match kind, value:
        case "player", int():
            return names(value)
        case "players", list():
            return language.join([names(v) for v in value if isinstance(v, int)])
        case "list", list():
            return language.join([str(v) for v in value])
        case "result", str():
            return RESULT_WORDS.get(value, value)
        case "points", int() | float():
            return language.points(_exact(value))
        case "signed", int() | float():
            return ("+" if value > 0 else "−") + language.points(_magnitude(value))
        case "line", int():
            return render(LINE_FIRST() if value == 1 else LINE_TOP(n=value), names, language)
        case "line", str():
            return value
        case "phrase", Said() | dict():
            return render(_said(value), names, language)
        case "phrases", list():
            return _series([_said(v) for v in value], names, language)
        case None, _:
            return "" if value is None else str(value)
    raise TypeError(f"argument {value!r} cannot be written as {kind}")


def _said(value: object) -> Said:
    """A phrase argument as a :class:`Said` (decoded from JSON, it is a mapping)."""
    return value if isinstance(value, Said) else msgspec.convert(value, Said)


def _series(said: list[Said], names: Callable[[int], str], language: Language) -> str:
    if not said:
        return ""
    text = render(said[-1], names, language)
    for part in reversed(said[:-1]):
        text = render(SEMICOLON(first=render(part, names, language), next=text), names, language)
    return text


@lru_cache(maxsize=4096)
def _exact(value: int | float) -> Fraction:
    """A point value from the wire as the fraction it stands for (halves and quarters are exact in binary).

    Cached (a summary writes a KS delta per player whose KS moved; the values repeat): equal keys (``1``,
    ``1.0``) stand for the same fraction."""
    return Fraction(value).limit_denominator(1 << 12)


@lru_cache(maxsize=4096)
def _magnitude(value: int | float) -> Fraction:
    """``abs(_exact(value))``, cached as :func:`_exact` is."""
    return abs(_exact(value))


RESULT_WORDS: Final = {"1-0": "1–0", "1/2-1/2": "½–½", "0-1": "0–1", "+-": "+/−", "-+": "−/+", "--": "−/−"}


def points_value(numerator: int, denominator: int) -> int | float:
    """Points in the core's units as a wire value: an integer when whole, else the float (exact for halves)."""
    whole, rest = divmod(numerator, denominator)
    return whole if rest == 0 else numerator / denominator


def format_points(value: Fraction) -> str:
    """Points as people write them: ``3``, ``2½``, ``½``, ``14¾``, ``−1¼``, otherwise a short decimal (``9.3``).

    Quarters come from Sonneborn-Berger (a draw against a player on 2½);
    the pages write them the same way.
    """
    return format_ratio(value.numerator, value.denominator)


def format_ratio(numerator: int, denominator: int) -> str:
    """:func:`format_points` of ``numerator / denominator`` (``denominator`` > 0, any terms), from integers."""
    if numerator < 0:
        return "−" + format_ratio(-numerator, denominator)
    common = gcd(numerator, denominator)
    numerator //= common
    denominator //= common
    whole, rest = divmod(numerator, denominator)
    if rest == 0:
        return str(whole)
    glyph = _GLYPHS.get((rest, denominator))
    if glyph is not None:
        return f"{whole}{glyph}" if whole else glyph
    return f"{numerator / denominator:g}"


_GLYPHS: Final = {(1, 4): "¼", (1, 2): "½", (3, 4): "¾"}
