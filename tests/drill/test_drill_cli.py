"""`headway drill`: the side-by-side table, and clear refusals with exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from headway.cli.main import _register_all, app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "drill"
ROLLOUT = str(EXAMPLES / "seed003-rollout.yaml")


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    if not any(c.name == "drill" for c in app.registered_commands):
        _register_all()
    return CliRunner()


def test_the_table_sets_the_template_beside_the_judge(runner: CliRunner) -> None:
    template = str(EXAMPLES / "seed003-canary-template.yaml")
    args = ["drill", ROLLOUT, "--template", template, "--scenario", "error-ratio=1%->5%"]
    result = runner.invoke(app, [*args, "--runs", "20", "--judge-worse-by", "5"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert 'metric "error-rate" reads the error ratio of the canary over 120s' in result.output
    median = next(line for line in lines if "median time to abort" in line).split()
    assert median[-4:-2] == ["180", "s"]  # seed 003's template: the pause, then 3 failures
    assert int(median[-2]) < 180  # the judge
    assert "reference: an SPRT that knew both error ratios needs a median of" in result.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--scenario", "error-ratio=5%"], "write error-ratio=BEFORE->AFTER"),
        (["--scenario", "dead-backend", "--judge-worse-by", "1"], "--judge-worse-by: "),
        (["--scenario", "dead-backend", "--runs", "0"], "must be above 0"),
    ],
)
def test_bad_options_are_refused_with_the_reason(
    runner: CliRunner, extra: list[str], message: str
) -> None:
    template = str(EXAMPLES / "seed003-template.yaml")
    result = runner.invoke(app, ["drill", ROLLOUT, "--template", template, *extra])
    assert result.exit_code == 2
    assert message in result.output


def test_a_template_the_rollout_names_but_nobody_gave_is_named(
    runner: CliRunner, tmp_path: Path
) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: other}\n"
        "spec:\n  metrics:\n  - name: m\n    provider: {prometheus: {query: 'x[1m]'}}\n"
    )
    result = runner.invoke(
        app, ["drill", ROLLOUT, "--template", str(other), "--scenario", "no-traffic"]
    )
    assert result.exit_code == 2
    assert "checkout-slo-check" in result.output and "given: other" in result.output


def test_a_rollout_that_does_not_validate_is_refused_with_file_and_line(
    runner: CliRunner, tmp_path: Path
) -> None:
    broken = tmp_path / "rollout.yaml"
    broken.write_text(Path(ROLLOUT).read_text().replace("      stableService", "      #"))
    template = str(EXAMPLES / "seed003-template.yaml")
    args = ["drill", str(broken), "--template", template, "--scenario", "no-traffic"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert f"{broken}:" in result.output and "stableService" in result.output
