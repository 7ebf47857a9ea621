"""The demo's pieces without the whole demo: narration, summary facts, the repository,
the traffic generator against a real HTTP server, the directory layout."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pygit2
import pytest
from rich.console import Console
from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.demo import launch
from headway.demo.layout import DemoLayout, DemoSetupError, examples_dir
from headway.demo.observe import RunView, narrate, revision_requests, rollout_view, run_views
from headway.demo.repo import ROLLOUT_FILE, DemoRepo
from headway.demo.summary import FinalState
from headway.demo.traffic import NOT_THE_APP, TrafficGenerator


def rollout(image: str, **status: Any) -> dict[str, Any]:
    steps = [{"setWeight": 10}, {"pause": {}}, {"setWeight": 100}]
    return {
        "spec": {
            "template": {"spec": {"containers": [{"name": "web", "image": image}]}},
            "strategy": {"canary": {"steps": steps}},
        },
        "status": status,
    }


def test_rollout_view_reads_argo_status_fields() -> None:
    view = rollout_view(
        rollout(
            "headway-demo/web:v3",
            phase="Paused",
            currentStepIndex=1,
            currentPodHash="b",
            stableRS="a",
            canary={"weights": {"canary": {"weight": 10}}},
        )
    )
    assert (view.tag, view.step, view.steps, view.weight, view.healthy_at) == (
        "v3",
        1,
        3,
        10,
        False,
    )


def test_narration_names_steps_analysis_values_and_the_abort() -> None:
    running = RunView("web-b-2", "Running", (("error-ratio", "Running", "[0.3]"),))
    failed = RunView("web-b-2", "Failed", (("error-ratio", "Failed", "[0.3]"),))
    before = rollout_view(rollout("x:v3", phase="Paused", currentStepIndex=1), [running])
    after = rollout_view(
        rollout(
            "x:v3",
            phase="Degraded",
            currentStepIndex=2,
            abort=True,
            message="RolloutAborted: analysis failed",
        ),
        [failed],
    )
    assert narrate(before, after) == [
        "  error-ratio = [0.3] (Failed)",
        "analysis web-b-2: Failed (error-ratio = [0.3])",
        "ABORTED, all traffic back to stable: RolloutAborted: analysis failed",
        "phase Degraded",
    ]
    assert narrate(after, after) == []


def test_run_views_keep_one_revision_oldest_first() -> None:
    def run(name: str, pod_hash: str, created: str) -> dict[str, Any]:
        labels = {"rollouts-pod-template-hash": pod_hash}
        return {
            "metadata": {"name": name, "labels": labels, "creationTimestamp": created},
            "status": {"phase": "Successful"},
        }

    runs = [
        run("r5", "a", "2026-01-01T00:00:05Z"),
        run("r2", "a", "2026-01-01T00:00:02Z"),
        run("other", "b", "2026-01-01T00:00:01Z"),
    ]
    assert [v.name for v in run_views(runs, "a")] == ["r2", "r5"]


def test_revision_requests_sums_one_hash_across_routes_and_codes() -> None:
    series = (
        "headway_requests_total{{service={svc!r},rollouts_pod_template_hash={h!r},code={c!r}}} {n}"
    )
    lines = [
        series.format(svc="web-canary", h="b", c="200", n=17),
        series.format(svc="web-canary", h="b", c="500", n=7),
        series.format(svc="web-stable", h="a", c="500", n=3),
    ]
    text = "# TYPE headway_requests_total counter\n" + "\n".join(lines).replace("'", '"') + "\n"
    counted = revision_requests(text, "b")
    assert (counted.requests, counted.errors) == (24, 7)


def test_final_state_agrees_only_when_git_live_and_status_match() -> None:
    assert FinalState("Healthy", "w:v2", "w:v2", "a", "Synced", "Healthy").agrees
    assert not FinalState("Healthy", "w:v3", "w:v2", "a", "Synced", "Healthy").agrees
    assert not FinalState("Degraded", "w:v2", "w:v2", "a", "Synced", "Healthy").agrees
    assert not FinalState("Healthy", "w:v2", "w:v2", "a", "OutOfSync", "Healthy").agrees


def test_layout_fills_the_template_and_refuses_a_used_directory(tmp_path: Path) -> None:
    layout = DemoLayout(tmp_path / "d")
    examples = examples_dir()
    files = layout.repo_files(examples, "127.0.0.1:9999")
    assert set(files) == {
        "apps/web/rollout.yaml",
        "apps/web/services.yaml",
        "apps/web/virtualservice.yaml",
        "apps/web/analysis-template.yaml",
    }
    assert b"http://127.0.0.1:9999/metrics" in files["apps/web/analysis-template.yaml"]
    assert b"__" not in b"".join(files.values())
    assert f"repoURL: {layout.repo.resolve().as_uri()}" in layout.application_text(examples)
    layout.install_files(examples)
    assert (layout.bin / "server.py").is_file() and layout.config.is_file()
    with pytest.raises(DemoSetupError, match="not empty"):
        layout.check_unused()


def test_a_release_is_a_one_line_commit_and_reverts_are_found(tmp_path: Path) -> None:
    files = DemoLayout(tmp_path).repo_files(examples_dir(), "127.0.0.1:1")
    repo = DemoRepo.create(tmp_path / "git", files, "Release web v1")
    assert repo.image() == "headway-demo/web:v1"
    sha = repo.release("v2")
    commit = repo.repo[sha].peel(pygit2.Commit)
    diff = commit.parents[0].tree.diff_to_tree(commit.tree)
    assert [p.delta.new_file.path for p in diff] == [ROLLOUT_FILE]
    assert diff.stats.insertions == diff.stats.deletions == 1
    assert repo.repo.status() == {}  # the working tree moved with the commit
    assert repo.reverts_since(sha) == []
    revert = repo.commit(
        {ROLLOUT_FILE: files[ROLLOUT_FILE]}, f"Revert\n\nHeadway-Revert-Of: {sha}\n"
    )
    assert [c.sha for c in repo.reverts_since(sha)] == [revert]


class _App(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    calls = 0

    def do_GET(self) -> None:
        type(self).calls += 1
        code, body = [(200, b"v2 pod-a"), (500, b"v3 pod-b"), (503, b"no endpoints")][
            self.calls % 3
        ]
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def app_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _App)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()


def test_traffic_generator_counts_answers_by_version(app_server: int) -> None:
    traffic = TrafficGenerator(
        "127.0.0.1", app_server, versions=frozenset({"v2", "v3"}), rate=200, workers=2
    )
    traffic.start()
    deadline = threading.Event()
    for _ in range(100):
        if traffic.counts().total >= 30:
            break
        deadline.wait(0.05)
    traffic.stop()
    counts = traffic.counts()
    assert counts.total >= 30
    assert counts.failed("v2") == 0 and counts.served("v2") > 0
    assert counts.failed("v3") == counts.served("v3") > 0
    assert counts.served(NOT_THE_APP) > 0  # the 503 the app did not write


def test_traffic_generator_stays_on_loopback() -> None:
    with pytest.raises(ValueError, match="loopback"):
        TrafficGenerator("10.0.0.1", 80, versions=frozenset())


def test_traffic_since_reports_each_version_between_two_tallies() -> None:
    from headway.demo.traffic import TrafficCounts, traffic_since

    first = TrafficCounts({("v2", 200): 100})
    later = TrafficCounts({("v2", 200): 150, ("v3", 200): 4, ("v3", 500): 2, ("(no answer)", 0): 1})
    assert (
        traffic_since(first, later)
        == "(no answer) 1 (1 failed) · v2 50 (0 failed) · v3 6 (2 failed)"
    )
    assert traffic_since(later, later) == ""
    assert traffic_since(None, first) == "v2 100 (0 failed)"


def test_narration_of_progress_and_promotion() -> None:
    weights = {"weights": {"canary": {"weight": 50}}}
    paused = rollout_view(rollout("x:v2", phase="Paused", currentStepIndex=1, canary=weights))
    onward = rollout_view(rollout("x:v2", phase="Progressing", currentStepIndex=2, canary=weights))
    done = rollout_view(
        rollout("x:v2", phase="Healthy", currentStepIndex=3, currentPodHash="b", stableRS="b")
    )
    assert narrate(paused, onward) == ["step 3/3: canary weight 50%", "phase Progressing"]
    assert narrate(onward, done) == ["all 3 steps done: canary weight 0%", "phase Healthy"]


def test_a_used_directory_is_refused_and_nothing_in_it_is_stopped(tmp_path: Path) -> None:
    from rich.console import Console

    from headway.demo.launch import run_demo
    from headway.demo.run import DemoOptions

    child = subprocess.Popen(["true"])
    child.wait()
    gone = child.pid  # a pid no process has any more
    assert gone > 1
    state = tmp_path / ".headway"
    state.mkdir()
    # Someone else's state: had the demo tried to stop it, the dead pid's file would be gone.
    (state / "serve.pid").write_text(f"{gone}\n")
    console = Console(record=True, width=200)
    code = run_demo(console, DemoOptions(tmp_path), temporary=False)
    assert code == 1
    assert "is not empty" in console.export_text()
    assert (state / "serve.pid").read_text() == f"{gone}\n"


def test_kept_demo_hints_name_a_runnable_program_on_unwrapped_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "venv" / "bin" / "headway"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # `headway` is not on PATH
    monkeypatch.setattr(sys, "argv", [str(script), "demo", "--keep"])
    console = Console(record=True, width=40)
    launch.explore_hints(console, tmp_path / "run")
    lines = console.export_text().splitlines()
    assert f"  {script} get pods -n demo -o wide" in lines
    assert f"Stop it with: {script} demo --stop --dir {tmp_path / 'run'}" in lines
    assert not any(line.startswith("headway") for line in lines)


def test_kept_demo_hints_print_a_directory_with_brackets_as_written(tmp_path: Path) -> None:
    """A `--dir` holding `[b]` or `\\[` is printed as typed (as Rich markup it lost the
    `[b]`, and under Rich 15 the backslash), so the stop command pasted back works."""
    root = tmp_path / "demo[b]" / "a\\[x]"
    console = Console(record=True, width=40)
    launch.explore_hints(console, root)
    lines = console.export_text().splitlines()
    assert f"cd {root}" in lines
    assert any(line.endswith(f"demo --stop --dir {root}") for line in lines)


def test_a_dir_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    _register_all()
    a_file = tmp_path / "demo"
    a_file.write_text("")
    for args in (["demo", "--dir", str(a_file)], ["demo", "--stop", "--dir", str(a_file)]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "is a file" in " ".join(result.output.replace("│", " ").split())


def test_serve_is_ready_when_it_names_its_controllers_and_an_exit_is_said_at_once(
    tmp_path: Path,
) -> None:
    from headway.demo.processes import serve_controllers

    layout = DemoLayout(tmp_path)
    layout.state.mkdir()
    layout.serve_log.write_text("note: something first\n")
    child = subprocess.Popen(["true"])
    child.wait()
    # An exited serve that never said it was serving: the wait ends with its log, not a timeout.
    with pytest.raises(DemoSetupError, match="exited; its log ends:\nnote: something first"):
        serve_controllers(layout, child.pid, timeout=30)
    layout.serve_log.write_text("serving rollouts, applications (pid 1, state x)\n")
    assert serve_controllers(layout, child.pid, timeout=0) == ["rollouts", "applications"]
