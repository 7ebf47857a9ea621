"""`headway check`'s kept drill answers never change what the check says.

Differential: over the drill rules' fixtures and a repository of several Rollouts and plans,
`check -o json` prints byte for byte the same with `--no-cache`, with an empty cache (which
the run fills) and warm, also after an edit that keeps a Rollout's plan (a new image) and
one that changes it (a weight). The answers are really read (a planted verdict changes the
output, so those comparisons could fail), and they are not read once a module file they were
computed with changed, under another Python, or from a damaged file. A warm run in a new
process loads neither numpy nor the drill's replay (the point of keeping them), and one whose
only change keeps the plan loads the planner but not the replay.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from check.conftest import FIXTURES, SELF_URL
from headway.check.drill_engine import DrillSettings
from headway.cli import check_cache_files, check_drill, check_drill_cache
from headway.cli.check_drill import drill_gate
from headway.cli.main import _register_all, app
from headway.model.yamlload import Document, load_documents
from import_probe import run_headway

_register_all()
runner = CliRunner()

DRILL_FIXTURES = ("HW214-analysis-never-fires", "HW215-analysis-false-aborts")
REPLAY = ("numpy", "headway.drill.summary", "headway.drill.traffic")
PLANNER = ("headway.drill.plan",)

ROLLOUT = """apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {{name: svc-{i}}}
spec:
  selector: {{matchLabels: {{app: svc-{i}}}}}
  template:
    metadata: {{labels: {{app: svc-{i}}}}}
    spec: {{containers: [{{name: app, image: "registry.example.com/svc-{i}:1.0.0"}}]}}
  strategy:
    canary:
      canaryService: svc-{i}-canary
      stableService: svc-{i}
      steps:
        - setWeight: {weight}
        - pause: {{duration: 2m}}
        - analysis: {{templates: [{{templateName: svc-{i}-slo}}]}}
        - setWeight: 50
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {{name: svc-{i}-slo}}
spec:
  metrics:
    - name: error-rate
      interval: 1m
      count: {count}
      failureLimit: {limit}
      successCondition: len(result) > 0 && result[0] < 0.02
      provider:
        prometheus:
          address: http://prometheus:9090
          query: >-
            sum(rate(http_requests_total{{app="svc-{i}",code=~"5.."}}[2m]))
            / sum(rate(http_requests_total{{app="svc-{i}"}}[2m]))
"""


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


def _check(root: Path, *options: str) -> str:
    result = runner.invoke(app, ["check", "-o", "json", *options, str(root)])
    return f"exit {result.exit_code}\n{result.output}"


def _generated(root: Path) -> Path:
    """Eight Rollouts of six plans (whole-service queries: some the drill shows never
    firing, some not; metrics with and without a count and failure limit; two weights),
    each in its own file with its template, and one the drill cannot read."""
    root.mkdir(parents=True)
    (root / "headway-check.yaml").write_text(f"selfURLs: [{SELF_URL}]\n")
    for i in range(8):
        count, limit = [(5, 1), (0, 0), (3, 0)][i % 3]
        text = ROLLOUT.format(i=i, weight=10 + 10 * (i % 2), count=count, limit=limit)
        (root / f"svc-{i}.yaml").write_text(text)
    unreadable = ROLLOUT.format(i=8, weight=10, count=5, limit=1)
    unreadable = unreadable[: unreadable.index("query:")] + "query: sum(errors)\n"
    (root / "svc-8.yaml").write_text(unreadable)  # a query the drill cannot simulate
    return root


def _roots(tmp_path: Path) -> list[Path]:
    roots = []
    for fixture in DRILL_FIXTURES:
        for state in ("found", "near_miss"):
            root = tmp_path / fixture / state
            shutil.copytree(FIXTURES / fixture / state, root)
            roots.append(root)
    roots.append(_generated(tmp_path / "generated"))
    return roots


def _answers_file(home: Path) -> Path:
    (file,) = sorted((home / "headway" / "check").glob("drills-*.marshal"))
    return file


def _stored(file: Path) -> dict[str, Any]:
    content = file.read_bytes()
    _, _, payload = content[len(check_drill_cache._FORMAT) :].partition(b"\n")
    stored = marshal.loads(payload)
    assert isinstance(stored, dict)
    return stored


def _write(file: Path, stored: dict[str, Any]) -> None:
    payload = marshal.dumps(stored)
    checksum = hashlib.sha256(payload).hexdigest().encode()
    file.write_bytes(check_drill_cache._FORMAT + checksum + b"\n" + payload)


def test_kept_answers_and_fresh_drills_print_the_same(tmp_path: Path) -> None:
    for root in _roots(tmp_path):
        drilled = _check(root, "--no-cache")
        assert "HW21" in drilled or "near_miss" in str(root), root  # the drill rules spoke
        assert _check(root) == drilled, f"cache empty: {root}"
        assert _check(root) == drilled, f"cache warm: {root}"


def test_edits_keeping_and_changing_the_plan_print_as_drilled_afresh(tmp_path: Path) -> None:
    root = _generated(tmp_path / "repo")
    _check(root)  # fills the cache
    rollout = root / "svc-1.yaml"
    rollout.write_text(rollout.read_text().replace(":1.0.0", ":2.0.0"))  # same plan
    assert _check(root) == _check(root, "--no-cache")
    rollout.write_text(rollout.read_text().replace("setWeight: 20", "setWeight: 40"))
    assert _check(root) == _check(root, "--no-cache")


def _plant_detection(file: Path, detected: float) -> None:
    """Every kept verdict says the drill detected `detected` of bad releases."""
    stored = _stored(file)
    answers = stored["answers"]
    verdicts = [k for k in answers if k.startswith("inputs:")]
    assert verdicts
    for key in verdicts:
        answers[key] = (answers[key][0], detected, *answers[key][2:])
    _write(file, stored)


def test_kept_verdicts_are_read(tmp_path: Path, cache_home: Path) -> None:
    """A planted verdict changes the output: the warm runs above did read the answers."""
    root = tmp_path / "found"
    shutil.copytree(FIXTURES / "HW214-analysis-never-fires" / "found", root)
    before = _check(root)
    assert "HW214" in before
    _plant_detection(_answers_file(cache_home), 1.0)
    assert "HW214" not in _check(root)
    assert _check(root, "--no-cache") == before


def _assert_not_read(root: Path, home: Path, damage: Any) -> None:
    before = _check(root)
    file = _answers_file(home)
    _plant_detection(file, 1.0)
    stored = _stored(file)
    damage(file, stored)
    assert _check(root) == before


def _touched(ending: str) -> Any:
    """Damage: the recorded file ending in `ending` has another modification time."""

    def touch(file: Path, stored: dict[str, Any]) -> None:
        path = next(p for p in stored["code"] if p.endswith(ending))
        size, mtime = stored["code"][path]
        stored["code"][path] = (size, mtime + 1)
        _write(file, stored)

    return touch


def test_answers_of_changed_code_are_not_read(tmp_path: Path, cache_home: Path) -> None:
    """A module file the answers were computed with has another modification time."""
    root = tmp_path / "found"
    shutil.copytree(FIXTURES / "HW214-analysis-never-fires" / "found", root)

    _assert_not_read(root, cache_home, _touched("drill/replay.py"))


def test_answers_of_a_changed_data_file_of_the_code_are_not_read(
    tmp_path: Path, cache_home: Path
) -> None:
    """The conditions grammar (`expr/conditions.lark`, read by `expr.program`) decides how
    a metric's successCondition reads, so a verdict depends on it as on a module file."""
    root = tmp_path / "found"
    shutil.copytree(FIXTURES / "HW214-analysis-never-fires" / "found", root)

    _assert_not_read(root, cache_home, _touched("expr/conditions.lark"))


def test_answers_of_a_removed_module_another_python_or_checkout_are_not_read(
    tmp_path: Path, cache_home: Path
) -> None:
    root = tmp_path / "found"
    shutil.copytree(FIXTURES / "HW214-analysis-never-fires" / "found", root)

    def removed(file: Path, stored: dict[str, Any]) -> None:
        stored["code"][str(tmp_path / "gone.py")] = (1, 1)
        _write(file, stored)

    def other_python(file: Path, stored: dict[str, Any]) -> None:
        stored["python"] = "2.7.18"
        _write(file, stored)

    def other_checkout(file: Path, stored: dict[str, Any]) -> None:
        stored["path"] = (str(tmp_path / "other-worktree" / "src"), *stored["path"])
        _write(file, stored)

    _assert_not_read(root, cache_home, removed)
    _assert_not_read(root, cache_home, other_python)
    _assert_not_read(root, cache_home, other_checkout)


@pytest.mark.parametrize(
    "damage",
    [
        lambda content: content[: len(content) // 2],
        lambda content: content[:-10] + b"\xff" * 10,
        lambda content: b"",
    ],
    ids=["truncated", "corrupt", "empty"],
)
def test_a_damaged_answers_file_is_ignored(tmp_path: Path, cache_home: Path, damage: Any) -> None:
    root = _generated(tmp_path / "repo")
    before = _check(root)
    file = _answers_file(cache_home)
    file.write_bytes(damage(file.read_bytes()))
    assert _check(root) == before
    assert _stored(_answers_file(cache_home))["answers"]  # rebuilt


@pytest.mark.parametrize(
    "answer",
    [("x",), ("", "1", 0.0, 0.0, 0.0, None, 0.0, 0.0, ()), ("", *[0.0] * 7, (1,)), None],
    ids=["short", "text-number", "number-name", "none"],
)
def test_an_answer_of_the_wrong_shape_is_drilled_again(
    tmp_path: Path, cache_home: Path, answer: Any
) -> None:
    root = tmp_path / "found"
    shutil.copytree(FIXTURES / "HW214-analysis-never-fires" / "found", root)
    before = _check(root)
    file = _answers_file(cache_home)
    stored = _stored(file)
    stored["answers"] = {key: answer for key in stored["answers"]}
    _write(file, stored)
    assert _check(root) == before


def test_no_cache_and_an_unwritable_cache_change_nothing(
    tmp_path: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _generated(tmp_path / "repo")
    drilled = _check(root, "--no-cache")
    assert not (cache_home / "headway").exists()

    def refused(file: Path, content: bytes) -> None:
        raise PermissionError(13, "Permission denied", str(file))

    monkeypatch.setattr(check_cache_files, "write_atomically", refused)
    assert _check(root) == drilled
    assert not list((cache_home / "headway" / "check").glob("*.marshal"))


def test_a_warm_run_in_a_new_process_replays_nothing(tmp_path: Path, cache_home: Path) -> None:
    root = _generated(tmp_path / "repo")
    env = {"XDG_CACHE_HOME": str(cache_home)}
    first = run_headway("check", "-o", "json", str(root), env=env)
    assert [m for m in REPLAY + PLANNER if m not in first.modules] == []  # drilled
    warm = run_headway("check", "-o", "json", str(root), env=env)
    assert warm.output == first.output
    assert [m for m in REPLAY + PLANNER if m in warm.modules] == []
    rollout = root / "svc-1.yaml"
    rollout.write_text(rollout.read_text().replace(":1.0.0", ":2.0.0"))
    same_plan = run_headway("check", "-o", "json", str(root), env=env)
    assert [m for m in PLANNER if m not in same_plan.modules] == []  # planned again
    assert [m for m in REPLAY if m in same_plan.modules] == []  # but not replayed
    assert same_plan.output == _probe_output(root, tmp_path)


def _probe_output(root: Path, tmp_path: Path) -> str:
    fresh = {"XDG_CACHE_HOME": str(tmp_path / "fresh-cache")}
    return run_headway("check", "--no-cache", "-o", "json", str(root), env=fresh).output


def test_the_answers_file_is_named_by_the_checked_directory(tmp_path: Path) -> None:
    one = check_drill_cache.open_answers(tmp_path / "a", directory=tmp_path)
    other = check_drill_cache.open_answers(tmp_path / "b", directory=tmp_path)
    assert one.file != other.file
    assert os.path.dirname(str(one.file)) == str(tmp_path)


def _documents(root: Path) -> tuple[list[Document], dict[str, Document]]:
    documents = [
        doc
        for file in sorted(root.glob("*.yaml"))
        for doc in load_documents(file.read_text(), str(file)).documents
    ]
    rollouts = [d for d in documents if d.kind == "Rollout"]
    templates = {d.name: d for d in documents if d.kind == "AnalysisTemplate"}
    return rollouts, templates


def test_a_kept_verdict_equals_the_drilled_one_field_for_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Numbers, not only what the rules print of them: each Rollout's verdict read back from
    the file equals the one drilled afresh, with the drill made to fail on the way back."""
    settings = DrillSettings(runs=5)
    cases = []
    for root in _roots(tmp_path / "roots"):
        rollouts, templates = _documents(root)
        cases.extend((root, rollout, templates) for rollout in rollouts)
    written = check_drill_cache.open_answers(tmp_path, directory=tmp_path / "cache")
    monkeypatch.setattr(check_drill, "_NUMBERS", {})
    drilled = [drill_gate(r, t, settings, answers=written) for _, r, t in cases]
    assert any(v.detected for v in drilled) and any(v.unreadable for v in drilled)
    written.save()

    def no_drill(*args: object) -> None:
        raise AssertionError("drilled again")

    monkeypatch.setattr(check_drill, "_NUMBERS", {})
    monkeypatch.setattr(check_drill, "_drill_numbers", no_drill)
    read = check_drill_cache.open_answers(tmp_path, directory=tmp_path / "cache")
    assert [drill_gate(r, t, settings, answers=read) for _, r, t in cases] == drilled


def test_code_that_cannot_be_fingerprinted_keeps_no_answers(
    tmp_path: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded module whose file cannot be read (from a zip archive, or removed since):
    what it computes could change unseen, so the run writes no answers, and prints as
    always."""
    root = _generated(tmp_path / "repo")
    drilled = _check(root, "--no-cache")
    unreadable = types.ModuleType("headway_zipped_module")
    unreadable.__file__ = str(tmp_path / "headway.pyz" / "headway_zipped_module.py")
    monkeypatch.setitem(sys.modules, unreadable.__name__, unreadable)
    assert _check(root) == drilled
    assert not list((cache_home / "headway" / "check").glob("drills-*.marshal"))
