"""`scripts/conformance` on small directories shaped like Argo CD's and Argo Rollouts' trees.

The scripts, objects and Go tests here are written for these tests; each table has a case
Headway answers as the table says and one it does not, so the counts prove both are seen.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from headway.conformance.__main__ import main
from headway.conformance.argo_cd_health import run_health_tables
from headway.conformance.argo_rollouts_assessment import run_assessment_tables
from headway.conformance.argo_rollouts_conditions import run_condition_tables
from headway.conformance.expr_lang_builtins import run_builtin_tables

REPO = Path(__file__).resolve().parents[2]

WIDGET_LUA = """\
local hs = {}
if obj.metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "Widget is being removed"
  return hs
end
if obj.status ~= nil and obj.status.ready then
  hs.status = "Healthy"
  hs.message = "Widget ready"
else
  hs.status = "Progressing"
  hs.message = "Widget starting"
end
return hs
"""

WIDGET_TESTS = """\
tests:
  - healthStatus:
      status: Healthy
      message: Widget ready
    inputPath: testdata/ready.yaml
  - healthStatus:
      status: Degraded
      message: Widget broken
    inputpath: testdata/starting.yaml
  - healthStatus:
      status: Progressing
      message: Widget is being removed
    inputPath: testdata/deleting.yaml
  - healthStatus:
      status: Healthy
    inputPath: testdata/missing.yaml
"""

ANY_KIND_LUA = 'return {status = "Suspended", message = "parked"}\n'

GO_TESTS = """\
package evaluate

const brokenCondition = "nosuchname > 1"

func TestStraightLine(t *testing.T) {
	b, err := EvalCondition([]float64{1, 2}, "all(result, {# > 0.5})")
	assert.Nil(t, err)
	assert.True(t, b)
	// A JSON field of the wrong type: false in Argo, an Error in Headway.
	b, err = EvalCondition(map[string]any{"code": "500"}, "result.code == 500")
	assert.NoError(t, err)
	assert.False(t, b)
}

func TestTable(t *testing.T) {
	rows := []struct {
		value any
		cond  string
		want  bool
	}{
		{"2", "asInt(result) == 2", true},
		{float64(0.2), "result > 0.5", false},
	}
	for _, row := range rows {
		b, err := EvalCondition(row.value, row.cond)
		assert.NoError(t, err)
		assert.Equal(t, row.want, b)
	}
}

func TestPhases(t *testing.T) {
	metric := v1alpha1.Metric{
		SuccessCondition: "result < 1",
		FailureCondition: "result > 2",
	}
	status, err := EvaluateResult(1.5, metric, *logCtx)
	assert.Equal(t, v1alpha1.AnalysisPhaseInconclusive, status)
	assert.NoError(t, err)
	broken := v1alpha1.Metric{SuccessCondition: brokenCondition}
	status, err = EvaluateResult(1.5, broken, *logCtx)
	assert.Equal(t, v1alpha1.AnalysisPhaseError, status)
}

func TestUnreadable(t *testing.T) {
	b, err := EvalCondition(makeResult(), "result > 1")
	assert.True(t, b)
}

func TestNoConditions(t *testing.T) {
	assert.True(t, isInf(math.Inf(1)))
}
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def argo_cd(tmp_path: Path) -> Path:
    root = tmp_path / "argo-cd"
    widget = "resource_customizations/example.com/Widget"
    wildcard = "resource_customizations/_.example.org/_"
    sprocket = "resource_customizations/parts.example.org/Sprocket"
    kind = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n"
    _write(
        root,
        {
            f"{widget}/health.lua": WIDGET_LUA,
            f"{widget}/health_test.yaml": WIDGET_TESTS,
            f"{widget}/testdata/ready.yaml": kind + "status:\n  ready: true\n",
            f"{widget}/testdata/starting.yaml": kind + "status:\n  ready: false\n",
            f"{widget}/testdata/deleting.yaml": kind.replace(
                "  name: w\n", "  name: w\n  deletionTimestamp: '2026-01-01T00:00:00Z'\n"
            ),
            f"{wildcard}/health.lua": ANY_KIND_LUA,
            f"{wildcard}/health_test.yaml": "tests:\n- healthStatus: {status: Suspended, "
            "message: parked}\n  inputPath: testdata/gadget.yaml\n"
            "- healthStatus: {status: Healthy, message: sprocket ok}\n"
            "  inputPath: testdata/sprocket.yaml\n",
            f"{wildcard}/testdata/sprocket.yaml": "apiVersion: parts.example.org/v1\n"
            "kind: Sprocket\nmetadata: {name: s}\n",
            f"{sprocket}/health.lua": 'return {status = "Healthy", message = "sprocket ok"}\n',
            f"{sprocket}/health_test.yaml": "tests: []\n",
            f"{wildcard}/testdata/gadget.yaml": "apiVersion: parts.example.org/v1\n"
            "kind: Gadget\nmetadata: {name: g}\n",
        },
    )
    return root


@pytest.fixture
def argo_rollouts(tmp_path: Path) -> Path:
    root = tmp_path / "argo-rollouts"
    _write(root, {"utils/evaluate/evaluate_test.go": GO_TESTS})
    return root


def test_health_tables_count_matches_differences_and_unreadable_cases(argo_cd: Path) -> None:
    tables = {table.table: table for table in run_health_tables(argo_cd)}
    widget = tables["example.com/Widget"]
    assert [(case.name, case.matched) for case in widget.cases] == [
        ("testdata/ready.yaml", True),
        ("testdata/starting.yaml", False),  # the script says Progressing, the table Degraded
        ("testdata/deleting.yaml", True),  # the script itself sees the deleted object
    ]
    assert widget.cases[1].actual == "Progressing 'Widget starting'"
    assert len(widget.unreadable) == 1 and "missing.yaml" in widget.unreadable[0]
    # Argo CD spells a wildcard directory `_`, and looks a script up by the object's kind
    # among all of them: a Sprocket in the wildcard table gets its own kind's script.
    assert tables["_.example.org/_"].matched == tables["_.example.org/_"].total == 2


def test_condition_tables_read_straight_line_code_loops_and_phases(argo_rollouts: Path) -> None:
    tables = {table.table: table for table in run_condition_tables(argo_rollouts)}
    assert set(tables) == {"TestStraightLine", "TestTable", "TestPhases", "TestUnreadable"}
    straight = tables["TestStraightLine"]
    assert [(c.expected, c.actual) for c in straight.cases] == [
        ("true", "true"),
        ("false", "error"),  # documented: comparing two types is an Error in Headway
    ]
    assert [(c.expected, c.actual) for c in tables["TestTable"].cases] == [
        ("true", "true"),
        ("false", "false"),
    ]
    assert [(c.expected, c.actual) for c in tables["TestPhases"].cases] == [
        ("Inconclusive", "Inconclusive"),
        ("Error", "Error"),
    ]
    unreadable = tables["TestUnreadable"]
    assert unreadable.cases == () and "makeResult" in unreadable.unreadable[0]


def test_the_report_prints_each_tables_rate_and_a_total(
    argo_cd: Path, argo_rollouts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(argo_cd), str(argo_rollouts), "--differences"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\n  example\.com/Widget +2/3 \(66\.7%\)  \(1 not readable\)\n", out)
    assert "  total: 4/5 (80.0%) in 3 tables, 1 cases not readable" in out
    assert re.search(r"\n  TestStraightLine +1/2 \(50\.0%\)\n", out)
    assert "testdata/starting.yaml: Argo Degraded 'Widget broken'; Headway Progressing" in out
    assert "  total: 5/6 (83.3%) in 4 tables, 1 cases not readable" in out


def test_directories_that_are_not_checkouts_are_a_usage_error(
    tmp_path: Path, argo_rollouts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([str(tmp_path / "nothing"), str(argo_rollouts)])
    assert exited.value.code == 2
    assert "no resource_customizations/ there; is it a checkout?" in capsys.readouterr().err


def test_the_script_runs_the_runner(argo_cd: Path, argo_rollouts: Path) -> None:
    done = subprocess.run(
        [str(REPO / "scripts" / "conformance"), str(argo_cd), str(argo_rollouts)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "== Argo CD resource_customizations health" in done.stdout
    assert "== Argo Rollouts conditions (utils/evaluate)" in done.stdout


BUILTIN_TESTS = """\
package builtin_test

func TestBuiltin(t *testing.T) {
	shared := []any{7}
	env := map[string]any{
		"Words":  []string{"a", "b"},
		"Ratios": []float64{1, 3},
		"Clock":  time.Now(),
		"Shared": &shared,
	}
	var tests = []struct {
		input string
		want  any
	}{
		{`join(Words, "+")`, "a+b"},
		{`mean(Ratios)`, 2.0},
		{`len(Words)`, 2.0},
		{`concat(Shared, [nil])`, []any{7, nil}},
		{`string(Clock)`, "now"},
		{`duration("1h")`, time.Hour},
	}
	for _, test := range tests {
		t.Run(test.input, func(t *testing.T) {})
	}
}

func TestBuiltin_errors(t *testing.T) {
	var errorTests = []struct {
		input string
		err   string
	}{
		{`len(1)`, `invalid argument`},
		{`len("ok")`, `Headway answers 2 here`},
	}
}
"""


def test_expr_lang_builtin_tables_compare_values_with_their_go_type(tmp_path: Path) -> None:
    _write(tmp_path, {"builtin/builtin_test.go": BUILTIN_TESTS})
    tables = {table.table: table for table in run_builtin_tables(tmp_path)}
    values = tables["TestBuiltin"]
    assert [(case.name, case.matched) for case in values.cases] == [
        ('join(Words, "+")', True),
        ("mean(Ratios)", True),
        ("len(Words)", False),  # Go's len is an int: 2, never 2.0
        ("concat(Shared, [nil])", True),  # a pointer in the env is followed
    ]
    assert values.cases[2].actual == "int 2"
    hour, clock = values.unreadable
    assert clock.startswith("string(Clock): uses env Clock")  # not a literal in the env
    assert hour.endswith("unknown name time.Hour")  # a row whose value is not a literal
    errors = tables["TestBuiltin_errors"]
    assert [(case.expected, case.actual) for case in errors.cases] == [
        ("error", "error"),
        ("error", "int 2"),
    ]


def test_expr_lang_tables_join_the_report_only_when_asked(
    argo_cd: Path, argo_rollouts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path / "expr", {"builtin/builtin_test.go": BUILTIN_TESTS})
    main([str(argo_cd), str(argo_rollouts)])
    assert "expr-lang" not in capsys.readouterr().out
    main([str(argo_cd), str(argo_rollouts), "--expr-lang", str(tmp_path / "expr")])
    assert re.search(r"\n  TestBuiltin_errors +1/2 \(50\.0%\)\n", capsys.readouterr().out)


ASSESSMENT_TESTS = """\
package analysis

func TestAssessMetricLimits(t *testing.T) {
	limit := intstr.FromInt(1)
	metric := v1alpha1.Metric{Name: "errors", FailureLimit: &limit, Interval: "30s"}
	result := v1alpha1.MetricResult{
		Failed: 2,
		Count:  2,
		Measurements: []v1alpha1.Measurement{{
			Phase:      v1alpha1.AnalysisPhaseFailed,
			FinishedAt: timePtr(metav1.Now()),
		}},
	}
	assert.Equal(t, v1alpha1.AnalysisPhaseFailed, assessMetricStatus(metric, result, false))
	// The pointer sees the variable's new value, as in Go.
	limit = intstr.FromInt(2)
	assert.Equal(t, v1alpha1.AnalysisPhaseRunning, assessMetricStatus(metric, result, false))
	result.Measurements = []v1alpha1.Measurement{{Phase: v1alpha1.AnalysisPhaseRunning}}
	assert.Equal(t, v1alpha1.AnalysisPhaseRunning, assessMetricStatus(metric, result, true))
}

func TestAssessMetricNothingMeasured(t *testing.T) {
	metric := v1alpha1.Metric{Name: "idle"}
	result := v1alpha1.MetricResult{}
	assert.Equal(t, v1alpha1.AnalysisPhasePending, assessMetricStatus(metric, result, false))
	// Argo: a run stopped before measuring succeeds; Headway's safety rule says Inconclusive.
	assert.Equal(t, v1alpha1.AnalysisPhaseSuccessful, assessMetricStatus(metric, result, true))
	phase, _ := someHelper(metric, result)
	assert.Equal(t, phase, assessMetricStatus(metric, result, true))
}

func TestSomethingElse(t *testing.T) {
	assert.Equal(t, 1, 1)
}
"""


def test_assessment_cases_replay_the_go_statements(tmp_path: Path) -> None:
    _write(tmp_path, {"analysis/analysis_test.go": ASSESSMENT_TESTS})
    tables = {table.table: table for table in run_assessment_tables(tmp_path)}
    assert set(tables) == {"TestAssessMetricLimits", "TestAssessMetricNothingMeasured"}
    limits = tables["TestAssessMetricLimits"]
    assert [(c.expected, c.actual) for c in limits.cases] == [
        ("Failed", "Failed"),
        ("Running", "Running"),  # only right if the pointer followed the variable
        ("Running", "Running"),  # the in-flight measurement has no FinishedAt
    ]
    idle = tables["TestAssessMetricNothingMeasured"]
    assert [(c.expected, c.actual) for c in idle.cases] == [
        ("Pending", "Pending"),
        ("Successful", "Inconclusive"),  # documented: Headway's require-measurements rule
    ]
    assert idle.unreadable == ("unknown name phase",)
