"""The catalogues read: one :class:`Catalogue` per language, for Python and, as JSON, for the pages."""

from __future__ import annotations

import gettext
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from functools import cache
from importlib import resources
from typing import Any, Final

import msgspec
from babel import Locale
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po
from babel.numbers import get_decimal_symbol

from tracker.core.phrases import format_points, phrase

#: The languages tracker speaks, English first (the fallback).
LANGUAGES: Final = ("en", "ru", "es", "de", "fr")

#: How a language writes points: ``glyphs`` (``2½``, ``14¾``) or ``decimal`` (``2,5``, ``14,75``).
POINTS: Final = phrase("format.points", "glyphs")

_CATEGORIES: Final = ("zero", "one", "two", "few", "many", "other")


class Catalogue:
    """One language's messages (key → its forms), plural rule, and ways of writing points and lists."""

    def __init__(self, code: str, catalog: Catalog) -> None:
        self.code = code
        self.locale = Locale.parse(code)
        self.messages: dict[str, tuple[str, ...]] = {}
        for message in catalog:
            if not message.id or message.context is None:
                continue
            if message.fuzzy and code != "en":
                continue
            forms = _forms(message.id if code == "en" else message.string)
            if forms and all(forms):
                self.messages[message.context] = forms
        self.plural_expression = catalog.plural_expr if code != "en" else "(n != 1)"
        self._plural: Callable[[int], int] = gettext.c2py(self.plural_expression)
        self.decimal = get_decimal_symbol(self.locale)
        style = self.messages.get(POINTS.key, (POINTS.english,))[0]
        self.glyphs = style == "glyphs"
        self.patterns: dict[str, str] = dict(self.locale.list_patterns["standard"])
        if code == "en":  # tracker's English writes "A, B and C" (no serial comma), as it always has
            self.patterns["end"] = "{0} and {1}"

    # -- tracker.core.phrases.Language -------------------------------------------------------

    def forms(self, key: str) -> Sequence[str] | None:
        return self.messages.get(key)

    def plural(self, n: int) -> int:
        return self._plural(n)

    def points(self, value: Fraction) -> str:
        if self.glyphs:
            written = format_points(value)
            return written.replace(".", self.decimal) if self.decimal != "." else written
        sign = "−" if value < 0 else ""
        value = abs(value)
        if value.denominator == 1:
            return f"{sign}{value.numerator}"
        return sign + f"{float(value):.3f}".rstrip("0").replace(".", self.decimal)

    def join(self, items: Sequence[str]) -> str:
        return join(items, self.patterns)

    # -- the pages ---------------------------------------------------------------------------

    def categories(self) -> dict[str, int]:
        """Which plural form each CLDR category takes (what ``Intl.PluralRules`` says → a form of the catalogue)."""
        found: dict[str, int] = {}
        for n in (*range(0, 200), 1000, 1000000):
            category = self.locale.plural_form(n)
            found.setdefault(category, self._plural(n))
        found.setdefault("other", max(found.values()))  # only fractions are "other" in some languages (ru)
        return {c: found[c] for c in _CATEGORIES if c in found}

    def page(self) -> dict[str, Any]:
        """The JSON of ``/static/i18n/<code>.json`` (see :func:`page_catalogue`)."""
        return {
            "lang": self.code,
            "plural": self.categories(),
            "points": "glyphs" if self.glyphs else "decimal",
            "decimal": self.decimal,
            "list": self.patterns,
            "messages": {k: v[0] if len(v) == 1 else list(v) for k, v in sorted(self.messages.items())},
        }


def _forms(value: object) -> tuple[str, ...]:
    """A PO message's id or string as its forms (one, or one per plural form)."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, tuple | list):
        return tuple(str(v) if v else "" for v in value)
    return ()


def join(items: Sequence[str], patterns: Mapping[str, str]) -> str:
    """``items`` as a list in a language's way (CLDR list patterns: ``2``, ``start``, ``middle``, ``end``)."""
    if len(items) < 2:
        return "".join(items)
    if len(items) == 2:
        return patterns["2"].format(*items)
    text = patterns["end"].format(items[-2], items[-1])
    for item in reversed(items[1:-2]):
        text = patterns["middle"].format(item, text)
    return patterns["start"].format(items[0], text)


def _read(name: str) -> Catalog:
    with resources.files("tracker.i18n").joinpath("locale", name).open("rb") as f:
        return read_po(f)


@cache
def language(code: str) -> Catalogue:
    """The catalogue of ``code`` (one of :data:`LANGUAGES`); raises :class:`ValueError` for another."""
    if code not in LANGUAGES:
        raise ValueError(f"tracker does not speak {code!r}: it speaks {', '.join(LANGUAGES)}")
    return Catalogue(code, _read("tracker.pot" if code == "en" else f"{code}.po"))


@cache
def page_catalogue(code: str) -> bytes:
    """The pages' catalogue of ``code`` as JSON bytes (made once from the PO file)."""
    return msgspec.json.encode(language(code).page())


def choose(wanted: Iterable[str | None]) -> str:
    """The first language of ``wanted`` that tracker speaks (``ru_RU.UTF-8`` and ``de-CH`` count), else English."""
    for item in wanted:
        if not item:
            continue
        for part in item.replace(":", ",").split(","):
            code = part.strip().split(";")[0].split(".")[0].replace("_", "-").split("-")[0].lower()
            if code in LANGUAGES:
                return code
    return "en"
