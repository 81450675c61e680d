"""Secrets handed to the CLI carelessly are used, and said to be careless (issue 27, item 8).

Reproductions: a world-readable password file was accepted silently, and ``--kafka-security
SASL_PLAINTEXT`` with PLAIN sent the password in clear without a word.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tracker.cli import parser
from tracker.cli.commands import arbiter_token, kafka_security


def _secret(tmp_path: Path, name: str, mode: int) -> Path:
    path = tmp_path / name
    path.write_text("a-secret-of-twenty-chars\n", encoding="utf-8")
    os.chmod(path, mode)
    return path


@pytest.mark.parametrize(("mode", "warned"), [(0o644, True), (0o600, False)])
def test_a_token_file_every_user_can_read_is_used_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: int, warned: bool
) -> None:
    path = _secret(tmp_path, "token", mode)
    args = parser().parse_args(["up", "--token-file", str(path)])
    assert arbiter_token(args) == "a-secret-of-twenty-chars"
    said = capsys.readouterr().err
    assert ("can be read by every user of this machine" in said and f"chmod 600 {path}" in said) is warned, said


@pytest.mark.parametrize(
    ("security", "mechanism", "warned"),
    [("SASL_PLAINTEXT", "PLAIN", True), ("SASL_SSL", "PLAIN", False), ("SASL_PLAINTEXT", "SCRAM-SHA-512", False)],
)
def test_a_password_in_clear_on_the_network_is_said_and_a_world_readable_password_file_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], security: str, mechanism: str, warned: bool
) -> None:
    path = _secret(tmp_path, "password", 0o644)
    args = parser().parse_args(
        [
            "worker",
            "--broker",
            "kafka://127.0.0.1:9092",
            "--kafka-security",
            security,
            "--kafka-sasl-mechanism",
            mechanism,
            "--kafka-user",
            "tracker",
            "--kafka-password-file",
            str(path),
        ]
    )
    settings = kafka_security(args)
    assert settings.password == "a-secret-of-twenty-chars"
    said = capsys.readouterr().err
    assert "can be read by every user of this machine" in said
    assert ("sends the Kafka password in clear on the network" in said) is warned, said
