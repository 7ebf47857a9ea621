"""The shipped alert rules, tested by the real `promtool` (Debian's prometheus package):
each rule on series that must fire it and series that must not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from conftest import require_program

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "alerts" / "headway-rules.yaml"
OPERATOR = ROOT / "deploy" / "alerts" / "headway-prometheusrule.yaml"
TESTS = Path(__file__).parent / "headway-rules.test.yaml"


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([require_program("promtool"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)


def alerts(rules: dict[str, object]) -> list[str]:
    return [r["alert"] for g in rules["groups"] for r in g["rules"]]  # type: ignore[index,attr-defined]


def test_the_rules_file_is_valid_and_every_rule_passes_its_promtool_tests() -> None:
    checked = promtool("check", "rules", str(RULES), cwd=ROOT)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = promtool("test", "rules", TESTS.name, cwd=TESTS.parent)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_every_rule_has_a_case_that_fires_and_series_that_must_not() -> None:
    cases = yaml.safe_load(TESTS.read_text())["tests"]
    for alert in alerts(yaml.safe_load(RULES.read_text())):
        mine = [c for c in cases if any(t["alertname"] == alert for t in c["alert_rule_test"])]
        assert mine, f"{alert} has no promtool test"
        checks = [t for c in mine for t in c["alert_rule_test"] if t["alertname"] == alert]
        fired = max(len(t["exp_alerts"]) for t in checks)
        # quiet: an evaluation expecting nothing, or more series than any evaluation fires
        quiet = any(not t["exp_alerts"] for t in checks) or any(
            len(c["input_series"]) > fired for c in mine
        )
        assert fired and quiet, f"{alert}: needs a series that fires and one that must not"


def test_the_tests_bite_a_rule_without_its_delay_fails_them(tmp_path: Path) -> None:
    broken = RULES.read_text().replace("for: 30m", "for: 1m")
    (tmp_path / "deploy" / "alerts").mkdir(parents=True)
    (tmp_path / "deploy" / "alerts" / RULES.name).write_text(broken)
    (tmp_path / "tests" / "alerts").mkdir(parents=True)
    (tmp_path / "tests" / "alerts" / TESTS.name).write_text(TESTS.read_text())
    tested = promtool("test", "rules", TESTS.name, cwd=tmp_path / "tests" / "alerts")
    assert tested.returncode != 0 and "HeadwayAppOutOfSyncInProd" in tested.stdout + tested.stderr


def test_the_prometheus_rule_manifest_holds_the_same_groups() -> None:
    manifest = yaml.safe_load(OPERATOR.read_text())
    assert (manifest["apiVersion"], manifest["kind"]) == (
        "monitoring.coreos.com/v1", "PrometheusRule"
    )
    assert manifest["spec"]["groups"] == yaml.safe_load(RULES.read_text())["groups"]
