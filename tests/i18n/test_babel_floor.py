"""The Babel that writes the catalogues (issue 38, item i): ``babel>=2.14`` let Babel 2.14-2.18 regenerate the
French and Spanish catalogues with two plural forms (and Russian with another formula), where the committed PO
files have Babel 2.19's: ``make i18n`` run with an older Babel rewrote every header.  Measured with
``babel.messages.plurals.get_plural`` of 2.16.0, 2.17.0 (CLDR 46) and 2.18.0 (CLDR 47): fr ``nplurals=2;
plural=(n > 1)``; 2.19.0: ``nplurals=3`` as committed.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from babel.messages.plurals import get_plural
from packaging.requirements import Requirement

from tracker.i18n.extract import read

REPO = Path(__file__).resolve().parents[2]
LOCALE = REPO / "tracker" / "i18n" / "locale"


def babel_requirement() -> Requirement:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return next(r for r in map(Requirement, project["dependencies"]) if r.name.lower() == "babel")


def test_the_babel_floor_is_the_first_release_whose_plural_forms_are_the_committed_ones() -> None:
    allowed = babel_requirement().specifier
    assert not allowed.contains("2.18.0"), f"babel{allowed} lets 2.18 write fr/es with two plural forms"
    assert allowed.contains("2.19.0")


@pytest.mark.parametrize("code", ["de", "fr", "es", "ru"])
def test_the_installed_babel_writes_the_committed_plural_forms(code: str) -> None:
    committed = read(LOCALE / f"{code}.po", code).plural_forms
    assert str(get_plural(code)) == committed
