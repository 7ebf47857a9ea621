"""HW212: a Rollout naming an analysis template that nothing in the repository defines."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from check.conftest import FIXTURES, CheckDir
from headway.check.config import ConfigError, parse_config
from headway.check.findings import Finding
from headway.cli.check import run_check

FOUND = FIXTURES / "HW212-missing-analysis-template" / "found"
NEAR_MISS = FIXTURES / "HW212-missing-analysis-template" / "near_miss"


def _rollout(analysis: str) -> str:
    return f"""\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {{name: api}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: api}}}}
  template:
    metadata: {{labels: {{app: api}}}}
    spec: {{containers: [{{name: api, image: "api:1"}}]}}
  strategy:
{analysis}"""


TEMPLATE = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: api-slo}
spec:
  metrics: [{name: ok, provider: {job: {spec: {template: {spec: {containers: []}}}}}}]
"""

BACKGROUND = """\
    canary:
      steps: [{setWeight: 50}, {pause: {duration: 5m}}]
      analysis:
        templates: [{templateName: api-slo, clusterScope: true}]
"""
POST_PROMOTION = """\
    blueGreen:
      activeService: api
      postPromotionAnalysis:
        templates: [{templateName: api-smoke}]
"""


def _hw212(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.rule == "HW212"]


def test_typo_names_rollout_missing_template_place_and_nearest(check_dir: CheckDir) -> None:
    typo, cluster = sorted(_hw212(check_dir(FOUND)), key=lambda f: f.line)
    assert (typo.file, typo.line, typo.app) == ("checkout/rollout.yaml", 26, "checkout")
    assert "Rollout/checkout" in typo.message and "AnalysisTemplate/chekout-slo" in typo.message
    assert "analysis step 2 (spec.strategy.canary.steps.2.analysis.templates.0)" in typo.message
    assert "Did you mean AnalysisTemplate/checkout-slo?" in typo.hint
    assert "ClusterAnalysisTemplate/smoke-test" in cluster.message
    assert "prePromotionAnalysis" in cluster.message
    assert "Did you mean" not in cluster.hint and "externalTemplates" in cluster.hint


def test_wrong_scope_hint_names_the_clusterscope_fix(tmp_path: Path, check_dir: CheckDir) -> None:
    (tmp_path / "rollout.yaml").write_text(_rollout(BACKGROUND))
    (tmp_path / "template.yaml").write_text(TEMPLATE)
    (finding,) = _hw212(check_dir(tmp_path))
    assert "ClusterAnalysisTemplate/api-slo in its background analysis" in finding.message
    assert "AnalysisTemplate/api-slo exists: set `clusterScope: false" in finding.hint


def test_post_promotion_reference_is_checked(tmp_path: Path, check_dir: CheckDir) -> None:
    (tmp_path / "rollout.yaml").write_text(_rollout(POST_PROMOTION))
    (tmp_path / "template.yaml").write_text(TEMPLATE)
    (finding,) = _hw212(check_dir(tmp_path))
    assert "AnalysisTemplate/api-smoke in its postPromotionAnalysis" in finding.message


def test_a_template_in_another_application_counts(tmp_path: Path, check_dir: CheckDir) -> None:
    root = tmp_path / "repo"
    shutil.copytree(NEAR_MISS, root)
    (root / "checkout" / "analysis.yaml").unlink()
    assert len(_hw212(check_dir(root))) == 1
    (root / "shared.yaml").write_text((NEAR_MISS / "checkout" / "analysis.yaml").read_text())
    assert _hw212(check_dir(root)) == []


def test_external_templates_in_the_config_silence_the_rule(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".headway").mkdir(parents=True)
    (root / "rollout.yaml").write_text(_rollout(POST_PROMOTION))
    (root / "service.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: api}\n")
    findings, _ = run_check(root)
    assert [f.rule for f in findings if f.severity == "error"] == ["HW212"]
    (root / ".headway" / "check.yaml").write_text("externalTemplates: [api-smoke]\n")
    findings, _ = run_check(root)
    assert _hw212(findings) == []


@pytest.mark.parametrize("value", ["api-smoke", "[1]", "{a: b}"])
def test_external_templates_must_be_a_list_of_names(value: str) -> None:
    with pytest.raises(ConfigError, match=r"check\.yaml: externalTemplates: expected a list"):
        parse_config(yaml.safe_load(f"externalTemplates: {value}"), "check.yaml", set())


def test_the_example_repository_stays_clean() -> None:
    example = Path(__file__).parents[2] / "examples" / "gitops-repo"
    findings, apps = run_check(example)
    assert apps >= 1 and _hw212(findings) == []


@pytest.mark.parametrize(
    ("arg", "flagged"),
    [
        ("- name: stable-hash\n", True),
        ("- name: stable-hash\n    value: abc\n", False),
        ("- name: stable-hash\n    valueFrom:\n      secretKeyRef: {name: s, key: k}\n", False),
    ],
)
def test_unpassed_arg_unless_it_has_a_value_or_valuefrom(
    tmp_path: Path, check_dir: CheckDir, arg: str, flagged: bool
) -> None:
    """HW213: the judge's stable-hash arg, declared in the template and never passed."""
    near_miss = FIXTURES / "HW213-unpassed-template-arg" / "near_miss"
    shutil.copytree(near_miss, tmp_path, dirs_exist_ok=True)
    template = tmp_path / "template.yaml"
    text = template.read_text()
    template.write_text(text.replace("  - name: threshold\n", f"  {arg}  - name: threshold\n"))
    found = [f for f in check_dir(tmp_path) if f.rule == "HW213"]
    assert [("'stable-hash'" in f.message) for f in found] == ([True] if flagged else [])
