"""A Rollout's analysis template is looked up beside it first. Argo Rollouts' test/e2e/
functional is a directory of separate examples, each a Rollout with its template in one file;
two of them define `AnalysisTemplate/analysis-secret` differently (one with every arg valued,
one whose args the Rollout passes). `headway check` of the directory took the other file's
template for `rollout-secret` and reported HW213 three times for args its own template
values. The files here follow that shape in Headway's own words."""

from __future__ import annotations

from pathlib import Path

from check.conftest import CheckDir


def _example(*, args: str, passed: str) -> str:
    return f"""\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {{name: web}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: web, image: "web:1"}}]}}
  strategy:
    canary:
      steps:
      - setWeight: 50
      - analysis:
          templates: [{{templateName: smoke}}]{passed}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {{name: smoke}}
spec:
  args:
{args}
  metrics:
  - name: ok
    interval: "{{{{args.every}}}}"
    provider: {{job: {{spec: {{template: {{spec: {{containers: []}}}}}}}}}}
"""


VALUED = _example(args="  - {name: every, value: 30s}", passed="")
PASSED = _example(args="  - {name: every}", passed="\n          args: [{name: every, value: 1m}]")


def test_each_rollout_is_checked_against_the_template_in_its_own_file(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    (tmp_path / "a-passes-the-arg.yaml").write_text(PASSED)
    (tmp_path / "b-values-the-arg.yaml").write_text(VALUED)
    assert [f for f in check_dir(tmp_path) if f.rule in ("HW212", "HW213")] == []


def test_a_template_elsewhere_is_still_found_and_judged(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    rollout, _, template = PASSED.replace(
        "\n          args: [{name: every, value: 1m}]", ""
    ).partition("---\n")
    (tmp_path / "rollout.yaml").write_text(rollout)
    (tmp_path / "template.yaml").write_text(template)
    [finding] = [f for f in check_dir(tmp_path) if f.rule in ("HW212", "HW213")]
    assert finding.rule == "HW213" and "'every'" in finding.message
