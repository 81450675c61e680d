"""The catalogues read: one :class:`Catalogue` per language, for Python and, as JSON, for the pages.

A catalogue reads its PO file, and Babel's locale data, when first asked for
what only they hold, not when it is made: every CLI command and server start
makes the English one, and most never need more than the code's own English
(the registry of :mod:`tracker.core.phrases`, from which ``tracker.pot`` is
extracted).  Babel's import and the template's parse were about 90 ms of each
start's CPU.
"""

from __future__ import annotations

import gettext
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from functools import cache, cached_property
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

import msgspec

from tracker.core.phrases import PHRASES, format_points, phrase

if TYPE_CHECKING:
    from babel import Locale
    from babel.messages.catalog import Catalog

#: The languages tracker speaks, English first (the fallback).
LANGUAGES: Final = ("en", "ru", "es", "de", "fr")

#: How a language writes points: ``glyphs`` (``2½``, ``14¾``) or ``decimal`` (``2,5``, ``14,75``).
POINTS: Final = phrase("format.points", "glyphs")

_CATEGORIES: Final = ("zero", "one", "two", "few", "many", "other")

#: English's plural rule (the template has no ``Plural-Forms`` of its own).
_ENGLISH_PLURAL: Final = "(n != 1)"


class Catalogue:
    """One language's messages (key → its forms), plural rule, and ways of writing points and lists.

    ``catalog`` is the PO file read (:func:`_read`, when first needed if not given).  English's forms come
    from the code's phrases until the template is read (for :meth:`page`): the same text, since the template is
    extracted from them.
    """

    def __init__(self, code: str, catalog: Catalog | None = None) -> None:
        self.code = code
        self._catalog = catalog

    @cached_property
    def catalog(self) -> Catalog:
        return self._catalog if self._catalog is not None else _read(_file(self.code))

    @cached_property
    def messages(self) -> dict[str, tuple[str, ...]]:
        messages: dict[str, tuple[str, ...]] = {}
        for message in self.catalog:
            if not message.id or message.context is None:
                continue
            if message.fuzzy and self.code != "en":
                continue
            forms = _forms(message.id if self.code == "en" else message.string)
            if forms and all(forms):
                messages[message.context] = forms
        return messages

    @cached_property
    def locale(self) -> Locale:
        from babel import Locale

        return Locale.parse(self.code)

    @cached_property
    def plural_expression(self) -> str:
        return self.catalog.plural_expr if self.code != "en" else _ENGLISH_PLURAL

    @cached_property
    def _plural(self) -> Callable[[int], int]:
        return gettext.c2py(self.plural_expression)

    @cached_property
    def decimal(self) -> str:
        from babel.numbers import get_decimal_symbol

        return get_decimal_symbol(self.locale)

    @cached_property
    def glyphs(self) -> bool:
        forms = self.forms(POINTS.key)
        return (forms[0] if forms else POINTS.english) == "glyphs"

    @cached_property
    def patterns(self) -> dict[str, str]:
        patterns: dict[str, str] = dict(self.locale.list_patterns["standard"])
        if self.code == "en":  # tracker's English writes "A, B and C" (no serial comma), as it always has
            patterns["end"] = "{0} and {1}"
        return patterns

    # -- tracker.core.phrases.Language -------------------------------------------------------

    def forms(self, key: str) -> Sequence[str] | None:
        if self.code == "en" and "messages" not in self.__dict__:  # the template unread: the code's own English
            p = PHRASES.get(key)
            if p is not None:
                return p.forms
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


def _file(code: str) -> str:
    """The PO file of ``code`` (English: the template)."""
    return "tracker.pot" if code == "en" else f"{code}.po"


def _read(name: str) -> Catalog:
    from babel.messages.pofile import read_po

    with resources.files("tracker.i18n").joinpath("locale", name).open("rb") as f:
        return read_po(f)


@cache
def language(code: str) -> Catalogue:
    """The catalogue of ``code`` (one of :data:`LANGUAGES`); raises :class:`ValueError` for another.  Its file
    is read when first needed (see the module docstring); another language's at once, so that a PO file that
    does not read fails here."""
    if code not in LANGUAGES:
        raise ValueError(f"tracker does not speak {code!r}: it speaks {', '.join(LANGUAGES)}")
    return Catalogue(code) if code == "en" else Catalogue(code, _read(_file(code)))


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
