"""docker-compose.yml and the Kubernetes manifests, checked against their schemas offline.

No Docker engine or cluster runs here, so the files are validated the way
``docker compose config`` and ``kubectl apply --dry-run`` would start: the
compose file against the Compose Specification's JSON Schema (the copy
``check-jsonschema`` ships), each manifest against the Kubernetes OpenAPI
schemas ``kubernetes-validate`` ships (strict: unknown fields are errors).
Then what the deployment needs: the topics tracker uses, two workers, a
gateway with a health check, resource requests.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.conftest import REPO
from tracker.kafka.topics import ALL_TOPICS, COMPACTED

COMPOSE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "deploy" / "Dockerfile"
MANIFESTS = sorted((REPO / "deploy" / "k8s").glob("*.yaml"))
KUBERNETES = "1.30.0"


def compose_schema() -> dict[str, Any]:
    """The Compose Specification schema vendored by check-jsonschema (read as data, not imported)."""
    spec = importlib.util.find_spec("check_jsonschema")
    assert spec is not None and spec.submodule_search_locations, "check-jsonschema is a dev dependency"
    path = Path(spec.submodule_search_locations[0]) / "builtin_schemas" / "vendor" / "compose-spec.json"
    schema: dict[str, Any] = json.loads(path.read_text())
    return schema


def compose() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return doc


def manifests() -> list[tuple[str, dict[str, Any]]]:
    return [(path.name, doc) for path in MANIFESTS for doc in yaml.safe_load_all(path.read_text()) if doc]


def compose_errors(doc: dict[str, Any]) -> list[str]:
    schema = compose_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]


def test_the_compose_file_follows_the_compose_specification() -> None:
    assert compose_errors(compose()) == []


def test_the_compose_schema_check_would_catch_a_mistake() -> None:
    broken = copy.deepcopy(compose())
    broken["services"]["worker"]["deploy"]["replicaz"] = 2
    assert compose_errors(broken)


def test_compose_runs_kraft_kafka_a_topic_job_two_workers_and_a_healthy_gateway() -> None:
    services = compose()["services"]
    kafka = services["kafka"]
    assert kafka["image"].startswith("apache/kafka:")
    assert kafka["environment"]["KAFKA_PROCESS_ROLES"] == "broker,controller"  # KRaft, no ZooKeeper
    assert "healthcheck" in kafka
    job = services["topics"]
    assert job["depends_on"]["kafka"]["condition"] == "service_healthy"
    script = "\n".join(job["command"])
    for topic in ALL_TOPICS:
        policy = "compact" if topic in COMPACTED else "delete"
        assert f"create {topic} {policy}" in script
    worker, gateway = services["worker"], services["gateway"]
    assert worker["deploy"]["replicas"] == 2
    assert worker["command"][:3] == ["worker", "--broker", "kafka://kafka:9092"]
    assert gateway["command"][:3] == ["gateway", "--broker", "kafka://kafka:9092"]
    for service in (worker, gateway):
        assert service["depends_on"]["topics"]["condition"] == "service_completed_successfully"
        assert service["build"]["dockerfile"] == "deploy/Dockerfile"
        assert "healthcheck" in service
    assert any("/healthz" in part for part in gateway["healthcheck"]["test"])
    assert "TRACKER_TOKEN" in gateway["environment"]


@pytest.mark.parametrize(("name", "doc"), manifests(), ids=lambda v: v if isinstance(v, str) else v["kind"])
def test_each_kubernetes_manifest_is_valid_for_the_cluster_version(name: str, doc: dict[str, Any]) -> None:
    kubernetes_validate.validate(doc, KUBERNETES, strict=True)


def test_the_kubernetes_check_would_catch_a_mistake() -> None:
    deployment = next(doc for _, doc in manifests() if doc["kind"] == "Deployment")
    broken = copy.deepcopy(deployment)
    broken["spec"]["template"]["spec"]["containers"][0]["resourcez"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES, strict=True)


def test_workers_and_gateways_request_resources_and_the_service_selects_the_gateways() -> None:
    docs = {(doc["kind"], doc["metadata"]["name"]): doc for _, doc in manifests()}
    for kind, name in (("Deployment", "tracker-worker"), ("Deployment", "tracker-gateway"), ("Job", "tracker-topics")):
        for container in docs[kind, name]["spec"]["template"]["spec"]["containers"]:
            assert container["resources"]["requests"].keys() >= {"cpu", "memory"}, name
    gateway = docs["Deployment", "tracker-gateway"]["spec"]["template"]
    service = docs["Service", "tracker-gateway"]["spec"]
    assert service["selector"].items() <= gateway["metadata"]["labels"].items()
    assert gateway["spec"]["containers"][0]["readinessProbe"]["httpGet"]["path"] == "/healthz"
    assert docs["Deployment", "tracker-worker"]["spec"]["replicas"] >= 2
    config = docs["ConfigMap", "tracker"]["data"]
    assert config["TRACKER_BROKER"].startswith("kafka://")
    job = "\n".join(docs["Job", "tracker-topics"]["spec"]["template"]["spec"]["containers"][0]["args"])
    for topic in ALL_TOPICS:
        assert f"create {topic} {'compact' if topic in COMPACTED else 'delete'}" in job


def test_the_image_installs_tracker_and_runs_it_unprivileged() -> None:
    text = DOCKERFILE.read_text()
    assert re.search(r"^FROM python:3\.1[1-9]", text, re.M)
    assert re.search(r"^USER 10001$", text, re.M)
    assert 'ENTRYPOINT ["tracker"]' in text
    copied = [line.split()[1:-1] for line in text.splitlines() if line.startswith("COPY ") and "--from" not in line]
    for sources in copied:
        for source in sources:
            # README.md is pyproject's readme: the build needs it wherever the package is built
            assert (REPO / source).exists() or source == "README.md", source
