"""tracker in its viewers' languages: the gettext catalogues, as Python languages and as the pages' JSON.

How this works
--------------

Every sentence and word tracker shows has one source: a
:func:`~tracker.core.phrases.phrase` in the Python code, a ``t("key",
"English")`` call in a page's script, or an element of a page marked
``data-i18n="key"`` with its English inside.  ``make i18n`` extracts them all
(:mod:`tracker.i18n.extract`, with Babel) into ``locale/tracker.pot`` and
merges it into one catalogue per language, ``locale/<code>.po``, where the
translations are written.  A catalogue is read as it is (Babel's PO
reader), so nothing is compiled and nothing is copied by hand:

* :func:`language` gives a :class:`~tracker.core.phrases.Language` for
  :func:`~tracker.core.phrases.render` (the CLI's tables and sentences);
* :func:`page_catalogue` gives the JSON the pages load from
  ``/static/i18n/<code>.json`` (the same messages, the language's plural
  forms by CLDR category, how it writes points and lists).

English is the code's own text: its catalogue is the template itself.
"""

from __future__ import annotations

from tracker.i18n.catalogue import (
    LANGUAGES,
    Catalogue,
    choose,
    language,
    page_catalogue,
)

__all__ = ["LANGUAGES", "Catalogue", "choose", "language", "page_catalogue"]
