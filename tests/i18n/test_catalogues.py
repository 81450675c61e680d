"""The catalogues: made from the code (nothing missing, nothing stale), complete in every language, and read right."""

from __future__ import annotations

import re
from fractions import Fraction

import msgspec
import pytest

from tracker.core.phrases import PHRASES, Said, render
from tracker.i18n import LANGUAGES, choose, language, page_catalogue
from tracker.i18n.catalogue import Catalogue, join
from tracker.i18n.extract import LOCALE, extract_html, messages, read, template

FIELD = re.compile(r"\{(\w+)(?::(\w+))?\}")
NAMES = {1: "Caruana", 2: "So", 3: "Firouzja"}.__getitem__


@pytest.fixture(scope="module")
def extracted() -> dict[str, object]:
    return messages(template())


def test_the_template_is_what_the_code_says_today(extracted: dict[str, object]) -> None:
    committed = messages(read(LOCALE / "tracker.pot"))
    assert sorted(set(extracted) - set(committed)) == [], "keys in the code missing from tracker.pot: run make i18n"
    assert sorted(set(committed) - set(extracted)) == [], "keys of tracker.pot no code uses: run make i18n"
    assert committed == extracted, "English changed in the code: run make i18n"


@pytest.mark.parametrize("code", LANGUAGES[1:])
def test_every_language_has_every_key_and_no_other(code: str, extracted: dict[str, object]) -> None:
    catalog = read(LOCALE / f"{code}.po", code)
    keys = {m.context for m in catalog if m.id}
    assert sorted(set(extracted) - keys) == [], f"{code}.po lacks keys: run make i18n, then translate"
    assert sorted(keys - set(extracted)) == [], f"{code}.po has keys no code uses: run make i18n"
    untranslated = [m.context for m in catalog if m.id and (m.fuzzy or not _all(m.string))]
    assert untranslated == [], f"{code}.po: untranslated or fuzzy"
    assert all(len(m.string) == catalog.num_plurals for m in catalog if m.id and isinstance(m.id, tuple))


@pytest.mark.parametrize("code", LANGUAGES[1:])
def test_a_translation_has_the_arguments_of_its_english(code: str) -> None:
    for m in read(LOCALE / f"{code}.po", code):
        if not m.id:
            continue
        english = {f for form in _list(m.id) for f in FIELD.findall(form)}
        for form in _list(m.string):
            assert set(FIELD.findall(form)) <= english, (code, m.context, form)
        if not isinstance(m.id, tuple):
            assert set(FIELD.findall(_list(m.string)[0])) == english, (code, m.context)


def test_the_html_extractor_reads_marked_text_and_attributes() -> None:
    import io

    page = b'<p data-i18n="a.b">Live\n  standings <b>now</b></p><input data-i18n-placeholder="a.c" placeholder="Name">'
    found = [(key, english) for _, _, (key, english), _ in extract_html(io.BytesIO(page), {}, (), {})]
    assert found == [("a.b", "Live standings now"), ("a.c", "Name")]


def test_plural_forms_and_categories_per_language() -> None:
    ru = language("ru")
    assert [ru.plural(n) for n in (1, 2, 5, 11, 21, 22, 25)] == [0, 1, 2, 2, 0, 1, 2]
    assert ru.categories() == {"one": 0, "few": 1, "many": 2, "other": 2}
    assert language("de").categories() == {"one": 0, "other": 1}
    assert language("en").plural(1) == 0 and language("en").plural(2) == 1


def test_points_and_lists_as_each_language_writes_them() -> None:
    assert language("en").points(Fraction(5, 2)) == "2½"
    assert language("ru").points(Fraction(5, 2)) == "2,5"
    assert language("de").points(Fraction(59, 4)) == "14,75"
    assert language("fr").points(Fraction(-3, 2)) == "−1,5"
    assert language("es").points(Fraction(3)) == "3"
    assert join(["A", "B", "C"], language("ru").patterns) == "A, B и C"
    assert join(["A", "B"], language("es").patterns) == "A y B"
    assert language("en").join(["A", "B", "C"]) == "A, B and C"


def test_english_from_the_template_renders_as_the_code_does() -> None:
    unread = Catalogue("en")  # English is the code's own phrases until the template is read (for the pages)
    template = Catalogue("en")
    assert template.messages and "messages" not in unread.__dict__
    for key, p in PHRASES.items():
        if key.startswith("test."):
            continue
        assert template.messages.get(key) == p.forms, key
        assert tuple(unread.forms(key) or ()) == tuple(template.forms(key) or ()) == p.forms, key
    assert "messages" not in unread.__dict__, "the English of the code's phrases needs no template"
    said = Said("line.top", {"n": 3})
    assert render(said, NAMES, unread) == render(said, NAMES, template) == render(said, NAMES) == "top 3"
    assert (unread.glyphs, unread.plural(1), unread.plural(2)) == (template.glyphs, 0, 1) == (True, 0, 1)


def test_the_pages_catalogue_is_json_of_the_same_messages() -> None:
    for code in LANGUAGES:
        data = msgspec.json.decode(page_catalogue(code))
        assert data["lang"] == code
        assert set(data["messages"]) == set(language(code).messages)
        assert data["plural"]["other"] >= 0
    with pytest.raises(ValueError, match="tracker does not speak 'xx'"):
        language("xx")


def test_the_language_is_chosen_from_what_is_asked_first() -> None:
    assert choose(["ru_RU.UTF-8"]) == "ru"
    assert choose([None, "de-CH,fr;q=0.8"]) == "de"
    assert choose(["pt-BR", "es"]) == "es"
    assert choose(["", "C.UTF-8"]) == "en"


def _list(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, tuple | list) else [str(value)]


def _all(value: object) -> bool:
    return all(_list(value)) if value else False
