"""The CLI's tests run in English whatever the locale of the shell running them (the CLI follows ``LANG``)."""

from __future__ import annotations

import pytest

LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


@pytest.fixture(autouse=True)
def no_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts without a locale (English); a test that means one sets it."""
    for name in LOCALE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
