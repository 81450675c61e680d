"""Which English words a translated page still shows (issue 31: "no English word left from the English catalogue").

A word counts as left over when it is a word of some English message, is not a word of any message of the page's
language (so "Koya", "Buchholz" or "Sonneborn" in a Spanish page are that language's words too), and is not part of
a player's name. Codes (``PTS``, ``KS``) are written in capitals and are never words here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from tracker.i18n.catalogue import language

_WORD = re.compile(r"[^\W\d_]{3,}")
_PLACEHOLDER = re.compile(r"\{[^}]*\}")

#: What the page shows besides its text: the attributes a person reads or hears. Text marked as written in another
#: language (the language menu's own names, ``<option lang="de">Deutsch</option>``) is that language's, not left over.
PAGE_WORDS_JS = """() => {
  const pageLang = document.documentElement.lang;
  let body = document.body.innerText;
  for (const el of document.body.querySelectorAll('[lang]')) {
    const own = el.textContent.trim();
    if (own && el.lang !== pageLang) body = body.split(own).join(' ');
  }
  const texts = [body, document.title];
  for (const el of document.querySelectorAll('[title],[aria-label],[placeholder],[alt]')) {
    for (const name of ['title', 'aria-label', 'placeholder', 'alt']) {
      const value = el.getAttribute(name);
      if (value) texts.push(value);
    }
  }
  return texts.join('\\n');
}"""


def words(text: str) -> set[str]:
    """The words of a text: letters only, three or more, lower case; capitals-only tokens (codes) left out."""
    return {w.lower() for w in _WORD.findall(_PLACEHOLDER.sub(" ", text)) if not w.isupper()}


@cache
def catalogue_words(code: str) -> frozenset[str]:
    """Every word of every message of one language's catalogue (English: the messages' English)."""
    found: set[str] = set()
    for forms in language(code).messages.values():
        for form in forms:
            found |= words(form)
    return frozenset(found)


def english_left(text: str, code: str, names: Iterable[str] = ()) -> list[str]:
    """The English catalogue's words a page in language ``code`` still shows, sorted; empty when it has none."""
    if code == "en":
        return []
    allowed = set(catalogue_words(code))
    for name in names:
        allowed |= words(name)
    return sorted((words(text) & catalogue_words("en")) - allowed)
