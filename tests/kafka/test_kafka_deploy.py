"""docker-compose.yml and the Kubernetes manifests, checked against their schemas offline.

No Docker engine or cluster runs here, so the files are validated the way
``docker compose config`` and ``kubectl apply --dry-run`` would start: the
compose file against the Compose Specification's JSON Schema (the copy
``check-jsonschema`` ships), each manifest against the Kubernetes OpenAPI
schemas ``kubernetes-validate`` ships (strict: unknown fields are errors).
Then what the deployment needs: the topics tracker uses, two workers, a
gateway with a health check, resource requests, a listener the host can
reach, TLS and SASL with the password as a mounted file, and commands
tracker's own parser accepts.
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
from tracker.cli import parser
from tracker.kafka.topics import ALL_TOPICS, COMPACTED, bootstrap_servers

COMPOSE = REPO / "docker-compose.yml"
MANAGED = REPO / "deploy" / "compose.managed.yml"
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


def compose(path: Path = COMPOSE) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(path.read_text())
    return doc


def manifests() -> list[tuple[str, dict[str, Any]]]:
    return [(path.name, doc) for path in MANIFESTS for doc in yaml.safe_load_all(path.read_text()) if doc]


def compose_errors(doc: dict[str, Any]) -> list[str]:
    schema = compose_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]


@pytest.mark.parametrize("path", [COMPOSE, MANAGED], ids=lambda p: p.name)
def test_the_compose_files_follow_the_compose_specification(path: Path) -> None:
    assert compose_errors(compose(path)) == []


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
    assert worker["command"][:3] == ["worker", "--broker", "kafka://kafka:29092"]
    assert gateway["command"][:3] == ["gateway", "--broker", "kafka://kafka:29092"]
    for service in (worker, gateway):
        assert service["depends_on"]["topics"]["condition"] == "service_completed_successfully"
        assert service["build"]["dockerfile"] == "deploy/Dockerfile"
        assert "healthcheck" in service
    assert any("/readyz" in part for part in gateway["healthcheck"]["test"])  # healthy once it serves
    assert any(":8081/healthz" in part for part in worker["healthcheck"]["test"])  # the worker's health port
    # compose refuses to start without a token, and says how to set one
    assert re.fullmatch(r"\$\{TRACKER_TOKEN:\?set TRACKER_TOKEN.*\}", gateway["environment"]["TRACKER_TOKEN"])


def advertised(kafka: dict[str, Any]) -> dict[str, str]:
    """The broker's advertised listeners: name → host:port."""
    pairs = (entry.split("://") for entry in kafka["environment"]["KAFKA_ADVERTISED_LISTENERS"].split(","))
    return {name: address for name, address in pairs}


def test_compose_kafka_advertises_one_listener_to_the_services_and_one_to_the_host() -> None:
    services = compose()["services"]
    kafka = services["kafka"]
    listeners = advertised(kafka)
    assert listeners == {"INTERNAL": "kafka:29092", "EXTERNAL": "localhost:9092"}
    bound = dict(entry.split("://") for entry in kafka["environment"]["KAFKA_LISTENERS"].split(","))
    assert {bound["INTERNAL"], bound["EXTERNAL"]} == {":29092", ":9092"}
    assert kafka["environment"]["KAFKA_INTER_BROKER_LISTENER_NAME"] == "INTERNAL"
    assert "127.0.0.1:9092:9092" in kafka["ports"]  # what `--broker kafka://localhost:9092` on the host reaches
    for name in ("worker", "gateway"):
        assert bootstrap_servers(services[name]["command"][2]) == [listeners["INTERNAL"]], name
    assert "--bootstrap-server kafka:29092" in "\n".join(services["topics"]["command"])
    readme, docs = (REPO / "README.md").read_text(), (REPO / "docs" / "distributed.md").read_text()
    assert "--broker kafka://localhost:9092" in readme and "--broker kafka://localhost:9092" in docs
    assert "TRACKER_TOKEN=choose-a-secret docker compose up" in docs


def expand(argv: list[str], env: dict[str, str]) -> list[str]:
    """Kubernetes' ``$(VAR)`` and compose's ``${VAR:-default}`` / ``${VAR:?…}`` in ``argv``."""

    def compose_var(m: re.Match[str]) -> str:
        name, kind, rest = m.groups()
        return env.get(name, rest) if kind == "-" else env[name]  # ${VAR:?message} must be set

    out = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a) for a in argv]
    return [re.sub(r"\$\{(\w+):([-?])([^}]*)\}", compose_var, a) for a in out]


def test_compose_workers_and_gateway_wait_for_the_topic_job_and_their_commands_parse() -> None:
    services = compose()["services"]
    for name in ("worker", "gateway"):
        args = parser().parse_args(services[name]["command"])
        assert args.wait_for_topics and args.wait_for_topics > 0, name
        assert args.kafka_security == "PLAINTEXT"
    assert parser().parse_args(services["worker"]["command"]).partitions == 8  # the topic job's count


def test_the_managed_compose_file_speaks_sasl_ssl_with_the_password_as_a_secret_file() -> None:
    doc = compose(MANAGED)
    env = {"KAFKA_BROKER": "kafka://broker.example.com:9093", "KAFKA_USER": "tracker"}
    assert set(doc["secrets"]) == {"kafka-password", "kafka-ca"}
    for name in ("worker", "gateway"):
        service = doc["services"][name]
        argv = expand([*service["entrypoint"][1:], *service["command"]], env)
        args = parser().parse_args(argv)
        assert (args.kafka_security, args.kafka_sasl_mechanism, args.kafka_user) == (
            "SASL_SSL",
            "SCRAM-SHA-512",
            "tracker",
        )
        assert args.kafka_password_file == "/run/secrets/kafka-password"
        assert args.kafka_ca_file == "/run/secrets/kafka-ca"
        assert args.wait_for_topics and args.wait_for_topics > 0
        assert set(service["secrets"]) == {"kafka-password", "kafka-ca"}
        assert "PASSWORD" not in json.dumps(service.get("environment", {})).upper()


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
    assert gateway["spec"]["containers"][0]["readinessProbe"]["httpGet"]["path"] == "/readyz"
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


def test_kubernetes_workers_and_gateways_wait_for_the_topic_job_and_read_the_kafka_password_from_a_secret_file() -> (
    None
):
    docs = {(doc["kind"], doc["metadata"]["name"]): doc for _, doc in manifests()}
    config = docs["ConfigMap", "tracker"]["data"]
    assert "PASSWORD" not in json.dumps(config).upper()
    assert config["TRACKER_KAFKA_SECURITY"] == "SASL_SSL"
    for name in ("tracker-worker", "tracker-gateway", "tracker-topics"):
        kind = "Job" if name == "tracker-topics" else "Deployment"
        pod = docs[kind, name]["spec"]["template"]["spec"]
        container = pod["containers"][0]
        volumes = {v["name"]: v for v in pod["volumes"]}
        (mount,) = [m for m in container["volumeMounts"] if m["name"] == "kafka-credentials"]
        secret = volumes[mount["name"]]["secret"]
        assert secret["secretName"] == "tracker-kafka" and mount["readOnly"] is True
        assert secret["defaultMode"] & 0o007 == 0, "the credentials are not world-readable"
        assert pod["securityContext"]["fsGroup"], "the container's user can read them through its group"
        assert "PASSWORD" not in json.dumps(container.get("env", [])).upper(), name
        if kind == "Job":
            script = "\n".join(container["args"])
            assert f"{mount['mountPath']}/password" in script and "--command-config" in script
            continue
        args = parser().parse_args(expand(container["args"], config))
        assert args.kafka_password_file == f"{mount['mountPath']}/password", name
        assert args.kafka_ca_file == f"{mount['mountPath']}/ca.crt", name
        assert (args.kafka_security, args.kafka_sasl_mechanism) == ("SASL_SSL", "SCRAM-SHA-512"), name
        assert args.wait_for_topics == float(config["TRACKER_TOPICS_WAIT"]), name  # never create them themselves
        if name == "tracker-worker":
            assert args.partitions == int(config["TRACKER_PARTITIONS"])  # the count the job creates them with
