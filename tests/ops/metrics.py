"""Reading ``/metrics`` as Prometheus does: with ``prometheus_client``'s own parser."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample


def scrape(url: str) -> tuple[str, dict[str, list[Sample]]]:
    """``/metrics`` at ``url``: its Content-Type and, per family, its samples.

    Asserts what the naming guide asks of every family: a HELP text, and a
    TYPE line right after it.
    """
    with urllib.request.urlopen(url, timeout=10) as response:
        content_type = response.headers["Content-Type"]
        text = response.read().decode()
    lines = text.splitlines()
    helps = {line.split()[2] for line in lines if line.startswith("# HELP ")}
    types = {line.split()[2] for line in lines if line.startswith("# TYPE ")}
    assert types and types == helps, f"families without HELP: {sorted(types - helps)}"
    found: dict[str, list[Sample]] = {}
    for family in text_string_to_metric_families(text):
        assert family.documentation.strip(), f"{family.name} has no HELP"
        found[family.name] = list(family.samples)
    return content_type, found


def value(samples: list[Sample], name: str, **labels: str) -> float:
    """The value of the sample ``name`` with exactly ``labels``."""
    matching = [s.value for s in samples if s.name == name and s.labels == labels]
    assert len(matching) == 1, (name, labels, samples)
    return matching[0]
