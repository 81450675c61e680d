"""The catalogues as the pages get them: ``/static/i18n/<code>.json`` from a real ``tracker up``."""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.conftest import RunningTracker
from tests.ops.test_http_caching import get
from tracker.i18n import LANGUAGES, page_catalogue


def test_each_language_is_served_revalidated_by_etag_and_another_is_a_404(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    server = tracker_factory()
    for code in LANGUAGES:
        status, headers, body = get(f"{server.http_url}/static/i18n/{code}.json")
        assert (status, headers["Content-Type"], headers["Cache-Control"]) == (200, "application/json", "no-cache")
        assert body == page_catalogue(code) and json.loads(body)["lang"] == code
        status, _, again = get(f"{server.http_url}/static/i18n/{code}.json", {"If-None-Match": headers["ETag"]})
        assert (status, again) == (304, b"")
    for wrong in ("xx.json", "ru", "ru.js", "..%2Fru.json"):
        assert get(f"{server.http_url}/static/i18n/{wrong}")[0] == 404, wrong
