"""Every command's `--help` and usage error start without importing the heavy parts of
Headway (the store, Git, HTTP clients and servers, the controllers, the model schemas, the
condition language, the drill's numerics): those load inside the functions that do the work.
Nor do they import the Rich modules Typer's help formatter imports but help never uses
(Markdown with markdown-it and Pygments, Rich's traceback and pretty-printer, attrs): see
`cli/typer_rich_deferral.py`.
Structural, not timed: each case runs in a fresh interpreter and reads `sys.modules`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer.main

from headway.cli import commands
from headway.cli import main as cli_main
from import_probe import run_headway

HEAVY = (
    "headway.cluster.local",  # the store and the local runtime
    "headway.controllers.",
    "headway.engine",
    "headway.local_mesh",
    "headway.model.schema",  # every typed kind (Rollout, Application, ...) is built on it
    "headway.expr",
    "headway.drill",
    "pygit2",
    "httpx",
    "starlette",
    "uvicorn",
    "ruamel",
    "numpy",
    "lark",
    "sqlite3",
    "asyncio",  # serve, runtime and analysis run import it when they run
    "ssl",
    "rich.live",  # only `rollouts get --watch` redraws
    # Imported by Typer's formatter at its top, deferred by cli/typer_rich_deferral.py.
    "rich.markdown",
    "markdown_it",
    "pygments",
    "rich.traceback",
    "rich.pretty",
    "attr",
)
# Help, usage errors and a missing path read no YAML.
YAML = ("yaml", "headway.model.yamlload")
# Name-only modules a command may import to spell its defaults.
LIGHT = frozenset({"headway.controllers.app", "headway.controllers.app.names"})


def _command_lines() -> list[tuple[str, ...]]:
    """Each top-level command, and each sub-command of a command group."""
    cli_main._register_all()
    root: Any = typer.main.get_command(cli_main.app)
    lines: list[tuple[str, ...]] = []
    for entry in commands.COMMANDS:
        lines.append((entry.name,))
        group = root.commands[entry.name]
        lines.extend((entry.name, sub) for sub in sorted(getattr(group, "commands", {})))
    return lines


def _probe(*args: str, env: dict[str, str] | None = None) -> tuple[int, list[str], str]:
    run = run_headway(*args, env={"COLUMNS": "100", **(env or {})})
    return run.code, sorted(run.modules), run.output


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.startswith(HEAVY + YAML) and m not in LIGHT]


@pytest.mark.parametrize("line", _command_lines(), ids=" ".join)
def test_help_imports_nothing_heavy(line: tuple[str, ...]) -> None:
    code, modules, output = _probe(*line, "--help")
    assert code == 0, output
    assert "Usage" in output
    assert _heavy(modules) == []


@pytest.mark.parametrize("entry", commands.COMMANDS, ids=lambda e: e.name)
def test_a_usage_error_imports_nothing_heavy(entry: commands.CommandEntry) -> None:
    code, modules, output = _probe(entry.name, "--no-such-option")
    assert code == 2, output
    assert "No such option" in output
    assert _heavy(modules) == []


# Commands that stop at their first check (no store, no such path): the answer comes before
# the work's modules load, the YAML reader included (check says a missing path before it
# loads the plugin catalog).
_NOTHING_THERE = "/nonexistent/headway-state"
EARLY_EXITS = (
    ("get", "pods", "--state-dir", _NOTHING_THERE),
    ("rollouts", "list", "--state-dir", _NOTHING_THERE),
    ("app", "list", "--state-dir", _NOTHING_THERE),
    ("promotions", "list", "--state-dir", _NOTHING_THERE),
    ("cluster", "list", "--state-dir", _NOTHING_THERE),
    ("check", _NOTHING_THERE),
    ("validate", _NOTHING_THERE),
    ("analysis", "evaluate", _NOTHING_THERE, "--metric", "m", "--value", "1"),
)


@pytest.mark.parametrize("line", EARLY_EXITS, ids=" ".join)
def test_a_command_that_finds_nothing_to_work_on_imports_nothing_heavy(
    line: tuple[str, ...],
) -> None:
    code, modules, output = _probe(*line)
    assert code in (1, 2), output
    assert "error" in output.lower()
    assert _heavy(modules) == []


_ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "web:1"}]
  strategy:
    canary:
      steps: [{setWeight: 20}, {pause: {duration: 1m}}]
"""
_APPLICATION_SET = """\
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: envs
spec:
  generators:
    - list:
        elements: [{env: dev}]
  template:
    metadata: {name: "web-{{env}}"}
    spec:
      project: default
      source: {repoURL: "https://git.example.com/web.git", path: "{{env}}"}
      destination: {server: "https://kubernetes.default.svc", namespace: web}
      syncPolicy: {syncOptions: [CreateNamespace=true]}
"""
# What validating plain manifests does not need: ApplicationSet rendering (its generators and
# their template libraries) and Jsonnet with Git's tree reader.
SETS_AND_JSONNET = ("headway.appset.", "headway.source.render_jsonnet", "pygit2")


def test_validating_plain_manifests_loads_no_set_rendering_or_jsonnet(tmp_path: Path) -> None:
    (tmp_path / "rollout.yaml").write_text(_ROLLOUT)
    code, modules, output = _probe("validate", str(tmp_path))
    assert code == 0, output
    assert "1 file, 1 object: 0 errors" in output
    assert [m for m in modules if m.startswith(SETS_AND_JSONNET)] == []


def test_validating_an_application_set_still_renders_it(tmp_path: Path) -> None:
    """The counterpart: the rendering loads when a set is there, and the Application it
    generates is validated (a misspelt sync option is an error at the template's line)."""
    (tmp_path / "set.yaml").write_text(_APPLICATION_SET.replace("=true", "=ture"))
    code, modules, output = _probe("validate", str(tmp_path))
    assert code == 1, output
    assert "set.yaml:15: Application/web-dev: spec.syncPolicy.syncOptions[0]" in output
    assert "headway.appset.documents" in modules


# The typed models of Argo's and Headway's kinds, and croniter (AppProject sync windows): each
# loads the first time a document of its kind is parsed (`model.manifests.PARSER_LOADERS`).
TYPED_MODELS = frozenset(
    f"headway.model.{name}"
    for name in (
        "analysis",
        "application",
        "applicationset",
        "appproject",
        "promotion_pipeline",
        "rollout",
    )
) | {"croniter"}
_PLAIN_MANIFESTS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "web:1"}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
"""


def test_validating_plain_manifests_imports_no_typed_model(tmp_path: Path) -> None:
    (tmp_path / "web.yaml").write_text(_PLAIN_MANIFESTS)
    code, modules, output = _probe("validate", str(tmp_path))
    assert code == 0, output
    assert "1 file, 2 objects: 0 errors" in output
    assert sorted(TYPED_MODELS.intersection(modules)) == []


def test_validating_a_rollout_imports_its_model_and_not_the_others(tmp_path: Path) -> None:
    """The counterpart: the Rollout's model loads for the Rollout; the kinds that are not
    there (AppProject with croniter, ApplicationSet, PromotionPipeline) do not."""
    (tmp_path / "web.yaml").write_text(_PLAIN_MANIFESTS)
    (tmp_path / "rollout.yaml").write_text(_ROLLOUT.replace("setWeight: 20", "setWeight: 120"))
    code, modules, output = _probe("validate", str(tmp_path))
    assert code == 1, output
    assert "rollout.yaml:13: Rollout/web: spec.strategy.canary.steps[0].setWeight" in output
    assert "headway.model.rollout" in modules
    absent = TYPED_MODELS - {"headway.model.rollout", "headway.model.analysis"}
    assert sorted(absent.intersection(modules)) == []


def test_checking_plain_manifests_imports_no_application_or_project_model(
    tmp_path: Path,
) -> None:
    """`headway check` reads Rollouts and ApplicationSets in its rules; Applications and
    AppProjects (with croniter) it parses only when a document is one."""
    (tmp_path / "web.yaml").write_text(_PLAIN_MANIFESTS)
    code, modules, output = _probe("check", str(tmp_path))
    assert code == 0, output
    absent = {"headway.model.application", "headway.model.appproject", "croniter"}
    assert sorted(absent.intersection(modules)) == []


# Typer with its Click and its help formatter, which only help, usage errors and the commands
# the entry point does not run directly need (`cli/entry.py`).
TYPER = ("typer", "typer.", "click", "headway.cli.main", "headway.cli.lazy_groups")


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (("validate", "examples/"), " objects: "),
        (("validate", "examples/invalid/core-objects.yaml"), "1 file, 3 objects: 5 errors"),
        (("--version",), "headway 0."),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else "",
)
def test_validating_paths_that_are_there_and_the_version_import_no_typer(
    line: tuple[str, ...], said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    code, modules, output = _probe(*line)
    assert code in (0, 1), output
    assert said in output
    assert [m for m in modules if m.startswith(TYPER)] == []


@pytest.mark.parametrize(
    "switches",
    [
        {"HEADWAY_YAML_RUST": "0", "HEADWAY_YAML_CROSSCHECK": "0"},
        {"HEADWAY_YAML_RUST": "1", "HEADWAY_YAML_CROSSCHECK": "1"},
        {"HEADWAY_YAML_RUST": "0", "HEADWAY_YAML_CROSSCHECK": "1"},
    ],
    ids=["pyyaml only", "crosschecking", "both switches"],
)
def test_the_yaml_reader_switches_import_no_yaml_library(switches: dict[str, str]) -> None:
    """Each command configures the YAML reader from these variables before it runs; the
    configuring must not load PyYAML (a command that reads no YAML pays for none). The suite
    sets HEADWAY_YAML_CROSSCHECK for every process it starts (tests/conftest.py), so the
    cases above cover it too; these pin each combination whatever the suite sets."""
    code, modules, output = _probe("validate", "/nonexistent/headway-state", env=switches)
    assert code != 0, output
    assert _heavy(modules) == []
