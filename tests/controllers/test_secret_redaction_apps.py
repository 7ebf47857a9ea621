"""Credentials in an Application's `repoURL` never reach status, events, logs or CLI output
(issue 16, item 5): plant `https://user:password@...`, run the controller and every command a
person reads, and grep all of it for the password."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml
from app_harness import APPS_NS, application, config_map, make_harness, manifests
from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.clock import VirtualClock
from headway.redaction import install_log_redaction
from prometheus_support import free_port

_register_all()
runner = CliRunner()
PASSWORD = "hunter2-planted-secret"


def _cli(tmp_path: Path, *args: str) -> str:
    result = runner.invoke(app, [*args, "--state-dir", str(tmp_path / "state")])
    return result.output


def test_repo_url_credentials_are_masked_everywhere(
    tmp_path: Path, clock: VirtualClock, caplog: pytest.LogCaptureFixture
) -> None:
    install_log_redaction()
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    url = f"http://deploy:{PASSWORD}@127.0.0.1:{free_port()}/team/shop.git"
    h.install(application("shop", url, path="app"))
    with caplog.at_level(logging.DEBUG):
        h.step("shop")
        logging.getLogger("headway.test").error("fetch of %s failed", url)
    stored = h.app("shop")
    errors = [c for c in stored["status"].get("conditions") or [] if "Error" in c["type"]]
    assert errors, stored["status"]  # the situation: an error that names the repository
    assert "http://***@127.0.0.1" in json.dumps(errors)  # named, without its credentials
    assert PASSWORD not in json.dumps(stored["status"])
    events = h.store.list("v1", "Event", namespace=APPS_NS)
    assert PASSWORD not in json.dumps(events)
    outputs = {
        "app get": _cli(tmp_path, "app", "get", "shop"),
        "app diff": _cli(tmp_path, "app", "diff", "shop"),
        "describe": _cli(tmp_path, "describe", "application", "shop", "-n", APPS_NS),
        "get -o yaml": _cli(tmp_path, "get", "application", "shop", "-n", APPS_NS, "-o", "yaml"),
        "get -o json": _cli(tmp_path, "get", "application", "shop", "-n", APPS_NS, "-o", "json"),
    }
    for command, text in outputs.items():
        assert PASSWORD not in text, f"{command} shows the password:\n{text}"
    assert "***@127.0.0.1" in outputs["app get"]
    assert yaml.safe_load(outputs["get -o yaml"])["metadata"]["name"] == "shop"
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert "fetch of http://***@127.0.0.1" in logged
    assert PASSWORD not in logged
