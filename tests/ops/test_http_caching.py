"""What a CDN in front of the gateways relies on: hashed static names cached for good, pages revalidated by ETag.

Against a real ``tracker up`` (the pages and files are the gateway's, the
same for ``tracker gateway``), over plain HTTP as a CDN would ask.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections.abc import Callable
from importlib import resources

from tests.conftest import RunningTracker
from tracker.gateway.http import IMMUTABLE, assets, build_assets, static_url

HASHED = re.compile(rb"/static/[A-Za-z0-9_-]+\.[0-9a-f]{12}\.(js|css|png|svg|ico)")


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_pages_name_their_files_by_content_hash_and_those_are_cached_for_a_year(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    server = tracker_factory()
    status, headers, page = get(f"{server.http_url}/t/some-event")
    assert status == 200
    assert headers["Cache-Control"] == "no-cache" and headers["ETag"]
    mentioned = set(re.findall(rb'"(/static/[^"]+)"', page))
    assert mentioned, page
    for url in sorted(mentioned):
        assert HASHED.fullmatch(url), url  # no unhashed reference is left
        status, headers, body = get(server.http_url + url.decode())
        assert status == 200, url
        assert headers["Cache-Control"] == IMMUTABLE == "public, max-age=31536000, immutable"
        # what a script imports is hashed too, so the whole tree of a page is immutable
        for inner in re.findall(rb'"(/static/[^"]+)"', body):
            assert HASHED.fullmatch(inner), (url, inner)
    # an unchanged page costs a 304 without a body; a changed one is sent again
    _, headers, _ = get(f"{server.http_url}/t/some-event")
    status, again, body = get(f"{server.http_url}/t/some-event", {"If-None-Match": headers["ETag"]})
    assert (status, body, again["ETag"]) == (304, b"", headers["ETag"])
    assert get(f"{server.http_url}/t/some-event", {"If-None-Match": '"other"'})[0] == 200
    # the API is never cached
    assert get(f"{server.http_url}/api/tournaments")[1]["Cache-Control"] == "no-store"


def test_a_file_is_renamed_when_it_or_anything_it_imports_changes() -> None:
    root = resources.files("tracker.web")
    raw = {name: root.joinpath(name).read_bytes() for name in ("live.js", "index.js", "index.html", "site.css")}
    before = build_assets(raw)
    assert before["index.html"].hashed is None, "pages keep their addresses"
    index = before["index.js"]
    assert index.hashed is not None and static_url("live.js") == f"/static/{assets()['live.js'].hashed}"
    assert f"/static/{before['live.js'].hashed}".encode() in index.body, "index.js imports live.js by its hashed name"
    after = build_assets({**raw, "live.js": raw["live.js"] + b"\n// changed\n"})
    assert after["live.js"].hashed != before["live.js"].hashed
    assert after["index.js"].hashed != index.hashed, "a change in an imported script renames its importer"
    assert after["site.css"].hashed == before["site.css"].hashed, "an unrelated file keeps its name"
    assert after["index.html"].etag != before["index.html"].etag, "the page names the new files: its ETag moves"


def test_a_stale_hash_is_not_found_and_the_plain_name_still_answers(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    server = tracker_factory()
    assert get(f"{server.http_url}/static/live.000000000000.js")[0] == 404
    status, headers, body = get(f"{server.http_url}/static/live.js")
    assert status == 200 and headers["Cache-Control"] == "no-cache"
    assert body == assets()["live.js"].body
