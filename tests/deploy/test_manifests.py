"""What a cluster team checks first in ``deploy/``: Pod Security "restricted", probes, one image tag, checkov.

The manifests' schema and commands are checked in
``tests/kafka/test_kafka_deploy.py``; here, what Kubernetes' Pod Security
admission (restricted profile) would refuse, the probes the gateway and the
worker answer, the disruption budget and spread of the gateways, the image
tag (the package version, the same in every file), and ``checkov -d
deploy`` run as ``make checkov`` runs it, with every skip carrying its reason.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO
from tracker import DISTRIBUTION, __version__

DEPLOY = REPO / "deploy"
MANIFESTS = sorted((DEPLOY / "k8s").glob("*.yaml"))
COMPOSE_FILES = [REPO / "docker-compose.yml", DEPLOY / "compose.managed.yml"]
IMAGE = f"tracker:{__version__}"


def documents() -> list[dict[str, Any]]:
    return [doc for path in MANIFESTS for doc in yaml.safe_load_all(path.read_text()) if doc]


def by_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in documents() if doc["kind"] == kind}


def pods() -> list[tuple[str, dict[str, Any]]]:
    return [(doc["metadata"]["name"], doc["spec"]["template"]["spec"]) for doc in documents()
            if doc["kind"] in ("Deployment", "Job")]  # fmt: skip


@pytest.mark.parametrize(("name", "pod"), pods(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_pod_meets_the_restricted_pod_security_standard(name: str, pod: dict[str, Any]) -> None:
    context = pod["securityContext"]
    assert context["runAsNonRoot"] is True and context["seccompProfile"]["type"] == "RuntimeDefault", name
    assert context.get("runAsUser", 1) != 0
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC")
    assert pod["automountServiceAccountToken"] is False, "tracker never talks to the Kubernetes API"
    for container in pod["containers"]:
        own = container["securityContext"]
        assert own["allowPrivilegeEscalation"] is False, name
        assert own["capabilities"]["drop"] == ["ALL"] and not own["capabilities"].get("add"), name
        assert own["readOnlyRootFilesystem"] is True, name
        assert not own.get("privileged")
        mounts = {m["mountPath"] for m in container["volumeMounts"]}
        assert "/tmp" in mounts, f"{name}: a read-only root needs a writable /tmp"
        assert container["resources"]["limits"].keys() >= {"cpu", "memory"}, name
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert all("hostPath" not in v for v in volumes.values())


def test_the_namespace_enforces_the_restricted_profile_and_everything_lives_in_it() -> None:
    (namespace,) = by_kind("Namespace").values()
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    for doc in documents():
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == namespace["metadata"]["name"], doc["metadata"]["name"]


def test_the_gateway_has_a_startup_probe_readiness_on_its_snapshots_and_broker_a_budget_and_a_spread() -> None:
    gateway = by_kind("Deployment")["tracker-gateway"]
    pod = gateway["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    startup, ready, alive = (container[probe] for probe in ("startupProbe", "readinessProbe", "livenessProbe"))
    assert (startup["httpGet"]["path"], ready["httpGet"]["path"], alive["httpGet"]["path"]) == (
        "/healthz", "/readyz", "/healthz")  # fmt: skip
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 60
    assert "--token-file" in container["args"] and "env" not in container, "the token is a mounted file"
    spread = {c["topologyKey"]: c for c in pod["topologySpreadConstraints"]}
    assert spread["kubernetes.io/hostname"]["maxSkew"] == 1
    labels = gateway["spec"]["selector"]["matchLabels"]
    assert spread["kubernetes.io/hostname"]["labelSelector"]["matchLabels"] == labels
    budget = by_kind("PodDisruptionBudget")["tracker-gateway"]["spec"]
    assert budget["minAvailable"] == 1 and budget["selector"]["matchLabels"] == labels
    assert gateway["spec"]["replicas"] > budget["minAvailable"]


def test_the_worker_is_probed_on_its_health_port_where_a_stalled_partition_fails_liveness() -> None:
    from tracker.cli import parser

    worker = by_kind("Deployment")["tracker-worker"]
    (container,) = worker["spec"]["template"]["spec"]["containers"]
    config = by_kind("ConfigMap")["tracker"]["data"]
    args = parser().parse_args([re.sub(r"\$\((\w+)\)", lambda m: config[m.group(1)], a) for a in container["args"]])
    assert (args.health_host, args.health_port) == ("0.0.0.0", 8081)
    assert args.log_format == "json"
    (port,) = container["ports"]
    assert port["containerPort"] == args.health_port
    for probe, path in (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        assert container[probe]["httpGet"] == {"path": path, "port": port["name"]}, probe
    # a restart comes only after a stall has lasted --stall-seconds and the probe failed its threshold
    alive = container["livenessProbe"]
    assert args.stall_seconds >= 60 and alive["periodSeconds"] * alive["failureThreshold"] >= 60


def test_one_image_tag_everywhere_and_it_is_the_package_version() -> None:
    images = [c["image"] for _, pod in pods() for c in pod["containers"] if c["image"].startswith("tracker")]
    for path in COMPOSE_FILES:
        images += re.findall(r"image: (tracker\S*)", path.read_text())
    assert images and set(images) == {IMAGE}, images
    assert f"-t {IMAGE}" in (DEPLOY / "Dockerfile").read_text()
    kafka = re.findall(r"apache/kafka:(\S+)", "".join(p.read_text() for p in [*COMPOSE_FILES, *MANIFESTS]))
    assert kafka and all(version.startswith("4.") for version in kafka), "Kafka 4.x (KRaft only) everywhere"


def test_every_checkov_skip_says_why() -> None:
    skips = [
        (doc["metadata"]["name"], key, value)
        for doc in documents()
        for key, value in doc["metadata"].get("annotations", {}).items()
        if key.startswith("checkov.io/skip")
    ]
    assert skips
    for name, key, value in skips:
        check, _, reason = value.partition("=")
        assert re.fullmatch(r"CKV2?_[A-Z0-9]+_\d+", check), (name, key)
        assert len(reason.split()) >= 8, f"{name}: {check} is skipped without a reason worth the name"


@pytest.mark.timeout(900)
def test_checkov_passes_on_deploy() -> None:
    """``make checkov``: builds checkov's own venv once (deploy/checkov-requirements.txt), then scans ``deploy/``."""
    done = subprocess.run(["make", "-s", "checkov"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    counts = re.findall(r"Passed checks: (\d+), Failed checks: (\d+), Skipped checks: (\d+)", done.stdout)
    assert len(counts) == 2, done.stdout  # the Dockerfile and the Kubernetes manifests
    assert all(int(failed) == 0 for _, failed, _ in counts) and all(int(passed) > 50 for passed, _, _ in counts)


def test_the_distribution_has_a_name_of_its_own_and_says_what_it_needs() -> None:
    import tomllib
    from importlib.metadata import metadata

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION == "koya-tracker"
    assert project["scripts"] == {"tracker": "tracker.cli:main"}
    assert project["requires-python"] == ">=3.11" and project["urls"]
    assert "Programming Language :: Python :: 3.11" in project["classifiers"]
    installed = metadata(DISTRIBUTION)
    assert installed["Version"] == __version__ and installed["Requires-Python"] == ">=3.11"


def test_tracker_version_names_the_version_and_the_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    from tracker.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"tracker {__version__} ({DISTRIBUTION})"


def test_the_dockerfile_health_check_serves_both_roles() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert "HEALTHCHECK" in text and "TRACKER_HEALTH_URL" in text
    assert Path(DEPLOY / "checkov-requirements.txt").read_text().count("checkov") >= 1
