"""`headway demo` for real, once: processes, traffic, Git. Every fact the summary prints is
checked against the state it claims to come from (the store, the repository, the mesh)."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx2
import pygit2
import pytest

from headway.clock import SystemClock
from headway.cluster.local.api.store import LocalCluster
from headway.demo.observe import revision_requests

pytestmark = pytest.mark.slow

API = "argoproj.io/v1alpha1"


def headway(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "TERM": "dumb"}
    return subprocess.run(
        [sys.executable, "-m", "headway", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def summary_number(output: str, label: str) -> tuple[int, int]:
    match = re.search(rf"{re.escape(label)}\s*│\s*(\d+), of which (\d+) failed", output)
    assert match, f"{label!r} not in the summary:\n{output}"
    return int(match.group(1)), int(match.group(2))


def test_demo_releases_aborts_reverts_tells_the_truth_and_stops_clean(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    result = headway("demo", "--dir", str(root), "--keep", timeout=240)
    try:
        check_the_facts(root, result)
        check_the_dashboard(result.stdout)
        assert processes_mentioning(str(root))  # --keep really left it running
    finally:
        stopped = headway("demo", "--stop", "--dir", str(root), timeout=120)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert processes_mentioning(str(root)) == []


def check_the_facts(root: Path, result: subprocess.CompletedProcess[str]) -> None:
    output = result.stdout
    assert result.returncode == 0, output + result.stderr

    repo = pygit2.Repository(str(root / "gitops"))
    log = list(repo.walk(repo.head.target))
    subjects = [c.message.splitlines()[0] for c in log]
    assert subjects[1:] == ["Release web v3", "Release web v2", "Release web v1"]
    revert, bad = log[0], log[1]
    assert f"Headway-Revert-Of: {bad.id}" in revert.message
    assert revert.author.name == "Headway"
    diff = revert.parents[0].tree.diff_to_tree(revert.tree)
    changed = [
        ln.content.strip() for p in diff for h in p.hunks for ln in h.lines if ln.origin in "+-"
    ]
    assert changed == ["image: headway-demo/web:v3", "image: headway-demo/web:v2"]
    assert str(revert.id)[:12] in output and str(bad.id)[:12] in output
    assert repo.status() == {}

    with LocalCluster(root / ".headway" / "cluster.db", SystemClock()) as store:
        rollout = store.get(API, "Rollout", "web", "demo")
        status = rollout["status"]
        assert status["phase"] == "Healthy" and not status.get("abort")
        assert (
            rollout["spec"]["template"]["spec"]["containers"][0]["image"] == "headway-demo/web:v2"
        )
        convergence = json.loads(rollout["metadata"]["annotations"]["headway.dev/git-convergence"])
        assert convergence["result"] == "Reverted" and convergence["commits"] == [str(revert.id)]
        bad_hash = convergence["podHash"]
        assert f"Headway-Pod-Hash: {bad_hash}" in revert.message
        runs = store.list(
            API,
            "AnalysisRun",
            namespace="demo",
            label_selector={"rollouts-pod-template-hash": bad_hash},
        )
        assert [r["status"]["phase"] for r in runs] == ["Failed"]
        assert runs[0]["metadata"]["name"] in revert.message
        app = store.get(API, "Application", "web", "argocd")
        assert app["status"]["sync"]["status"] == "Synced"
        assert app["status"]["sync"]["revision"] == str(revert.id)

    info = json.loads((root / ".headway" / "runtime.json").read_text())
    metrics = httpx2.get(f"http://{info['metricsAddress']}/metrics", timeout=5).text
    counted = revision_requests(metrics, bad_hash)
    assert counted.requests > 0 and 0 < counted.errors < counted.requests
    assert summary_number(output, "requests v3 served (mesh)") == (counted.requests, counted.errors)
    served, failed = summary_number(output, "requests v3 answered (traffic generator)")
    assert served > 0 and failed > 0
    assert re.search(r"Healthy, running headway-demo/web:v2", output)
    assert "agree" in output and "disagree" not in output
    heard = re.search(r"webhook receiver heard (.+)", output)
    triggers = set(heard.group(1).strip().split(", ")) if heard else set()
    assert triggers == {"on-rollout-aborted", "on-revert-committed"}


def check_the_dashboard(output: str) -> None:
    """The kept demo's dashboard answers at the printed URL, and v3's abort is on its chart:
    the failed run's measurements above the threshold and the marker where it failed."""
    found = re.search(r"Dashboard: (http://127\.0\.0\.1:\d+/)rollouts/demo/web", output)
    assert found, f"no dashboard address in the --keep hints:\n{output}"
    page = httpx2.get(found.group(1) + "rollouts/demo/web", timeout=30).text
    charts = [
        json.loads(html.unescape(data))
        for data in re.findall(r'data-chart="([^"]*)"', page)
    ]
    failed = [c for c in charts if any(p[2] == "Failed" for p in c["points"])]
    assert failed, "no chart shows a Failed measurement"
    assert any(m["label"] == "run Failed: rollout aborts" for c in failed for m in c["markers"])

