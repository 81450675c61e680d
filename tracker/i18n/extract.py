"""Extraction: every message of the code into one template, and the template merged into each catalogue.

``python -m tracker.i18n.extract`` (``make i18n``) writes
``locale/tracker.pot`` from the sources and merges it into every
``locale/<code>.po`` (new messages come in untranslated, messages no code
uses any more are dropped).  Three kinds of source are read, each with
Babel's extractors:

* Python: ``phrase("key", "English")`` and ``plural("key", "one", "other")``
  (:mod:`tracker.core.phrases`);
* the pages' scripts: ``t("key", "English", …)`` and ``tn("key", "one",
  "other", …)`` (``web/i18n.js``);
* the pages' HTML: an element with ``data-i18n="key"`` (its text is the
  English) and ``data-i18n-title``, ``data-i18n-aria-label``,
  ``data-i18n-placeholder`` (the English is the attribute of that name), by
  :func:`extract_html`.

The key is the message's context, the English its id.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterator, Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import IO, Any, Final

from babel import Locale
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

from tracker.i18n.catalogue import LANGUAGES

PACKAGE: Final = Path(__file__).resolve().parents[1]
LOCALE: Final = Path(__file__).resolve().parent / "locale"
KEYWORDS: Final[dict[str, Any]] = {
    "phrase": ((1, "c"), 2),
    "plural": ((1, "c"), 2, 3),
    "t": ((1, "c"), 2),
    "tn": ((1, "c"), 2, 3),
}
METHODS: Final = [
    ("**.py", "python"),
    ("web/**.js", "javascript"),
    ("web/**.html", "tracker.i18n.extract:extract_html"),
]
ATTRIBUTES: Final = ("title", "aria-label", "placeholder")


class _Marked(HTMLParser):
    """The marked elements of one page: ``(line, key, English)``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str, str]] = []
        self._open: list[tuple[str, int, str, list[str]]] = []  # tag, line, key, text so far

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        line = self.getpos()[0]
        for name in ATTRIBUTES:
            key = values.get(f"data-i18n-{name}")
            if key:
                self.found.append((line, key, values.get(name) or ""))
        key = values.get("data-i18n")
        if key:
            self._open.append((tag, line, key, []))

    def handle_data(self, data: str) -> None:
        for _, _, _, text in self._open:
            text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1][0] == tag:
            _, line, key, text = self._open.pop()
            self.found.append((line, key, " ".join("".join(text).split())))


def extract_html(
    fileobj: IO[bytes], keywords: Mapping[str, Any], comment_tags: Collection[str], options: Mapping[str, Any]
) -> Iterator[tuple[int, str, tuple[str, str], list[str]]]:
    """A Babel extractor for the pages' marked elements (see the module docstring)."""
    parser = _Marked()
    parser.feed(fileobj.read().decode("utf-8"))
    parser.close()
    for line, key, english in parser.found:
        yield line, "t", (key, english), []


def template() -> Catalog:
    """Every message of the sources (see the module docstring), as a template.

    Raises :class:`ValueError` when one key has two different Englishes, or a message has none.
    """
    catalog = Catalog(project="tracker", copyright_holder="the tracker authors", msgid_bugs_address="", fuzzy=False)
    english: dict[str, object] = {}
    for filename, line, message, comments, context in extract_from_dir(
        str(PACKAGE), METHODS, keywords=KEYWORDS, strip_comment_tags=True
    ):
        if context is None or not message or not all(message if isinstance(message, tuple) else (message,)):
            raise ValueError(f"tracker/{filename}:{line}: a message needs a key and its English")
        if english.setdefault(context, message) != message:
            raise ValueError(f"tracker/{filename}:{line}: key {context!r} has two Englishes")
        catalog.add(message, locations=[(f"tracker/{filename}", line)], auto_comments=comments, context=context)
    return catalog


def write(path: Path, catalog: Catalog) -> None:
    with path.open("wb") as f:
        write_po(f, catalog, width=116, sort_by_file=False, omit_header=False, include_previous=False)


def messages(catalog: Catalog) -> dict[str, object]:
    """A catalogue's messages as ``key → (English, translation)``: what a merge must keep (dates and lines aside)."""
    return {m.context: (m.id, m.string or "") for m in catalog if m.id and m.context}


def read(path: Path, code: str | None = None) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale=code)


def _new(code: str) -> Catalog:
    team = Locale.parse(code).english_name
    return Catalog(
        locale=code, project="tracker", copyright_holder="the tracker authors", language_team=team, fuzzy=False
    )


def main() -> int:
    pot = template()
    target = LOCALE / "tracker.pot"
    if not target.exists() or messages(read(target)) != messages(pot):
        write(target, pot)
    for code in LANGUAGES[1:]:
        path = LOCALE / f"{code}.po"
        catalog = read(path, code) if path.exists() else _new(code)
        before = messages(catalog)
        catalog.update(pot, no_fuzzy_matching=True)
        catalog.obsolete.clear()
        if messages(catalog) != before or not path.exists():
            write(path, catalog)
        missing = sum(1 for m in catalog if m.id and not (all(m.string) if isinstance(m.string, tuple) else m.string))
        print(f"{path.relative_to(PACKAGE.parent)}: {len(pot)} messages, {missing} untranslated", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
