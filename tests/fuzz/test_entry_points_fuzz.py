"""Every entry point on generated input: a clear error and a documented exit status, never a
traceback. `headway check` on generated repositories, `apply -f` on generated objects,
`analysis evaluate` on generated values, and the argument parsing of every command that
does not start a long-lived process."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fuzz.shapes import CORE_OBJECTS, JSON, JSONISH, TEXT, WRONG, argo_manifest
from headway.cli.check import UsageError, run_check
from headway.cli.main import _register_all, app

CORE_KINDS = ["ConfigMap", "Secret", "Service", "Deployment", "Namespace", "Job", "Ingress"]


@st.composite
def core_object(draw: st.DrawFn) -> dict[str, Any]:
    """A built-in Kubernetes object with generated (often wrong) content."""
    kind = draw(st.sampled_from(CORE_KINDS))
    api = {"Deployment": "apps/v1", "Job": "batch/v1", "Ingress": "networking.k8s.io/v1"}
    metadata = draw(
        st.fixed_dictionaries(
            {"name": st.sampled_from(["web", "a"]) | TEXT},
            optional={"namespace": TEXT | WRONG, "labels": JSONISH, "annotations": JSONISH},
        )
        | WRONG
    )
    obj = {"apiVersion": api.get(kind, "v1"), "kind": kind, "metadata": metadata}
    extra = st.dictionaries(st.sampled_from(["spec", "data", "status", "stringData"]), JSONISH)
    return {**obj, **draw(extra)}


OBJECTS = st.lists(argo_manifest() | core_object(), min_size=1, max_size=4)


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    _register_all()
    return CliRunner()


def _invoke(runner: CliRunner, args: list[str]) -> int:
    result = runner.invoke(app, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"headway {args!r} raised") from result.exception
    return result.exit_code


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    """A directory the examples share (Hypothesis runs them all in one test call)."""
    with tempfile.TemporaryDirectory(prefix="headway-fuzz-") as tmp:
        yield Path(tmp)


def _write(directory: Path, objects: list[dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.yaml"):
        old.unlink()
    for index, obj in enumerate(objects):
        (directory / f"m{index}.yaml").write_text(yaml.safe_dump(obj, sort_keys=False))
    return directory


SELF_URL = "https://git.example/infra.git"
SHOP = {
    "apiVersion": "argoproj.io/v1alpha1",
    "kind": "Application",
    "metadata": {"name": "shop", "namespace": "argocd"},
    "spec": {
        "project": "default",
        "source": {"repoURL": SELF_URL, "path": "app", "targetRevision": "HEAD"},
        "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"},
        "syncPolicy": {"automated": {}},
    },
}


@settings(max_examples=40)
@given(
    top=st.lists(argo_manifest(), max_size=2),
    app=st.lists(argo_manifest() | CORE_OBJECTS | core_object(), min_size=1, max_size=4),
)
def test_check_on_generated_repositories(
    workdir: Path, top: list[dict[str, Any]], app: list[dict[str, Any]]
) -> None:
    """Generated Argo objects at the top, and generated objects rendered as the directory app
    of an Application whose repository is this one, so the rules read them."""
    repo = _write(workdir / "repo", [SHOP, *top])
    _write(repo / "app", app)
    (repo / "headway-check.yaml").write_text(f"selfURLs: [{SELF_URL}]\n")
    try:
        findings, checked = run_check(repo)
    except UsageError as err:
        assert str(err)
        return
    assert checked >= 1
    assert all(f.message for f in findings)


@settings(max_examples=15)
@given(objects=OBJECTS)
def test_apply_generated_objects(
    runner: CliRunner, workdir: Path, objects: list[dict[str, Any]]
) -> None:
    files = _write(workdir / "manifests", objects)
    state = str(workdir / "state")
    assert _invoke(runner, ["apply", "-f", str(files), "--state-dir", state]) in (0, 1)


TEMPLATE = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: t}
spec:
  metrics:
  - name: m
    successCondition: %s
    failureCondition: %s
"""
CONDITIONS = st.sampled_from(
    [
        "result[0] < 0.05", "len(result) > 0 && result[0] < 1", "result > 2", "result == nil",
        "int(result) > 1", "string(result) == '1'", "asFloat(result[0]) < 1", "''",
        "default(result[0], 0) < 0.8", "all(result, {# < 1})", "result.a.b > 1",
    ]
)  # fmt: skip
VALUES = (
    st.builds(json.dumps, JSON)
    | st.text(max_size=12)
    | st.sampled_from(["[" + "9" * 5000 + "]", "[" * 5000, "NaN", "-Infinity", "1e999", '"x"'])
)


@settings(max_examples=30)
@given(success=CONDITIONS, failure=CONDITIONS, value=VALUES)
def test_analysis_evaluate_on_generated_values(
    runner: CliRunner, workdir: Path, success: str, failure: str, value: str
) -> None:
    template = workdir / "t.yaml"
    template.write_text(TEMPLATE % (json.dumps(success), json.dumps(failure)))
    code = _invoke(runner, ["analysis", "evaluate", str(template), "-m", "m", "--value", value])
    assert code in (0, 1, 2)


# Commands that return at once; `serve`, `demo`, `runtime start`, waits and watches run
# until stopped and are exercised by their own end-to-end tests.
COMMANDS = [
    ["validate"], ["check"], ["get"], ["describe"], ["logs"], ["apply"], ["delete"],
    ["analysis", "evaluate"], ["rollouts", "list"], ["rollouts", "get"],
    ["rollouts", "promote"], ["rollouts", "abort"], ["rollouts", "retry"],
    ["rollouts", "pause"], ["rollouts", "restart"], ["rollouts", "undo"], ["rollouts", "set"],
    ["app", "list"], ["app", "get"], ["app", "diff"], ["app", "sync"], ["app", "history"],
    ["app", "rollback"], ["app", "terminate"], ["app", "confirm-prune"], ["runtime", "status"],
    ["drill"],
]  # fmt: skip
NO_STATE_DIR = (["drill"],)  # commands that touch no state and take no --state-dir
TOKENS = st.sampled_from(
    [
        "-n", "--namespace", "-o", "--format", "json", "yaml", "wide", "text", "sarif", "-f",
        "--filename", "--revision", "HEAD", "--strict", "--full", "--to-revision", "0", "-1",
        "99999999999999999999", "--image", "web=x:1", "--timeout", "--retry-limit", "-2",
        "--metric", "-m", "--value", "[]", "--template", "--help", "--", "-", "rollout", "web",
        "deploy", "pods", "app", "x", "", "--prune", "--dry-run", "--revision=abc", "=",
        "--scenario", "error-ratio=1%->5%", "latency=1->", "--rps", "--runs", "--horizon",
    ]
)  # fmt: skip


@settings(max_examples=40)
@given(
    command=st.sampled_from(COMMANDS),
    tokens=st.lists(TOKENS | st.text(max_size=6), max_size=6),
)
def test_argument_parsing_of_every_command(
    runner: CliRunner, workdir: Path, command: list[str], tokens: list[str]
) -> None:
    with contextlib.chdir(workdir):  # relative paths and the default .headway stay in here
        state = [] if command in NO_STATE_DIR else ["--state-dir", str(workdir / "state")]
        code = _invoke(runner, [*command, *tokens, *state])
    assert code in (0, 1, 2)
