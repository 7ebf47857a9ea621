"""HW214/HW215: the drill's numbers in `headway check`; what it cannot simulate is a note."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from check.conftest import FIXTURES, CheckDir
from headway.check.config import ConfigError, parse_config
from headway.check.drill_engine import DrillSettings
from headway.cli import check_drill
from headway.drill import summary
from headway.model import k8s
from headway.model.schema import Schema
from headway.model.yamlload import Document

NEVER_FIRES = FIXTURES / "HW214-analysis-never-fires"


def test_never_fires_gives_the_numbers_and_the_fix(check_dir: CheckDir) -> None:
    (finding,) = [f for f in check_dir(NEVER_FIRES / "found") if f.rule == "HW214"]
    assert "detected 0%" in finding.message and "median time to abort never" in finding.message
    assert "scope 'error-rate', 'p99-latency'" in finding.hint
    assert "set `count`" in finding.hint and "docs/judge.md" in finding.hint


def test_a_provider_the_drill_cannot_simulate_is_an_info_note(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    shutil.copytree(NEVER_FIRES / "near_miss", tmp_path, dirs_exist_ok=True)
    template = tmp_path / "template.yaml"
    template.write_text(
        template.read_text().replace("prometheus:\n        address", "datadog:\n        address")
    )
    found = [f for f in check_dir(tmp_path) if f.rule in {"HW214", "HW215"}]
    assert [(f.rule, f.severity) for f in found] == [("HW214", "info")]
    assert "not drilled" in found[0].message and "datadog" in found[0].message


def test_drill_config_is_read_and_checked() -> None:
    config = parse_config(
        {"drill": {"runs": 50, "rps": 20, "minDetection": "50%", "maxFalseAborts": 0.01}},
        "check.yaml",
        set(),
    )
    assert config.drill == DrillSettings(
        runs=50, rps=20.0, min_detection=0.5, max_false_aborts=0.01
    )
    with pytest.raises(ConfigError, match=r"check.yaml: drill: runs must be 1 to 200"):
        parse_config({"drill": {"runs": 100000}}, "check.yaml", set())
    with pytest.raises(ConfigError, match=r"drill.horizon"):
        parse_config({"drill": {"horizon": "soon"}}, "check.yaml", set())
    with pytest.raises(ConfigError, match=r"unknown key 'rate'"):
        parse_config({"drill": {"rate": 1}}, "check.yaml", set())


def test_copies_of_one_template_per_service_are_drilled_once(
    tmp_path: Path, check_dir: CheckDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three services, each with its own Rollout and template names: one drill answers all."""
    drilled: list[object] = []
    real = summary.drill

    def counting(*args: object, **kwargs: object) -> object:
        drilled.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(summary, "drill", counting)
    monkeypatch.setattr(check_drill, "_NUMBERS", {})
    found = NEVER_FIRES / "found"
    for service in ("cart", "search", "payments"):
        for name in ("rollout.yaml", "template.yaml"):
            text = (found / name).read_text()
            renamed = text.replace("checkout-service", service).replace(
                "checkout-slo-check", f"{service}-slo"
            )
            (tmp_path / f"{service}-{name}").write_text(renamed)
    findings = [f for f in check_dir(tmp_path) if f.rule == "HW214"]
    assert sorted(f.resource for f in findings) == [
        "Rollout/cart",
        "Rollout/payments",
        "Rollout/search",
    ]
    assert len(drilled) == 1


def test_the_drill_reads_the_views_validation_built(
    check_dir: CheckDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validation parses each Rollout and template once; the drill reuses those views (it
    parsed both again, a seventh of a check of 1,000 Applications)."""
    parsed: list[tuple[str, str]] = []
    real = k8s.parse_typed

    def counting(document: Document, spec: Schema, *, status: bool = True) -> object:
        parsed.append((document.kind, document.name))
        return real(document, spec, status=status)

    monkeypatch.setattr(k8s, "parse_typed", counting)
    monkeypatch.setattr(check_drill, "_NUMBERS", {})
    findings = [f for f in check_dir(NEVER_FIRES / "found") if f.rule == "HW214"]
    assert findings  # the drill ran on the Rollout
    assert sorted(parsed) == sorted(set(parsed))
    assert ("Rollout", "checkout-service") in parsed
