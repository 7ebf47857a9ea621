"""The dashboard's pages over a real store: what the CLI reads, shown; Secret data never."""

from __future__ import annotations

import json
import re

import httpx2
from dashboard_env import API, Scene


def get(scene: Scene, path: str) -> httpx2.Response:
    return httpx2.get(scene.served.url + path, timeout=30)


def test_applications_list_shows_sync_and_health(scene: Scene) -> None:
    page = get(scene, "/applications")
    assert page.status_code == 200
    row = re.search(r'<tr [^>]*data-app="argocd/guestbook"[^>]*>(.*?)</tr>', page.text, re.S)
    assert row is not None
    assert "OutOfSync" in row.group(1) and "Progressing" in row.group(1)
    assert "Running" in row.group(1)


def test_application_page_says_which_wave_waits_on_what(scene: Scene) -> None:
    text = get(scene, "/applications/argocd/guestbook").text
    operation = re.search(r'<div id="app-operation">(.*?)</div>', text, re.S)
    assert operation is not None
    assert "Sync wave 1" in operation.group(1)
    assert "waiting for Deployment/web to be Healthy" in operation.group(1)
    assert "Deployment/web is Progressing" in operation.group(1)
    assert "2 of 5 retries used" in text
    assert "SyncError" in text


def test_application_page_shows_tree_history_and_ignored_fields(scene: Scene) -> None:
    text = get(scene, "/applications/argocd/guestbook").text
    tree = re.search(r'<div class="tree" id="app-tree">(.*?)</div>', text, re.S)
    assert tree is not None
    assert "ConfigMap</strong> settings" in tree.group(1)
    assert "Deployment</strong> web" in tree.group(1)
    history = re.search(r'<table id="app-history">(.*?)</table>', text, re.S)
    assert history is not None and "bbbbbbbbbbbb" in history.group(1)
    assert "alice" in history.group(1)
    ignored = re.search(r'id="app-ignored">(.*?)</p>', text, re.S)
    assert ignored is not None and "apps/Deployment: /spec/replicas" in ignored.group(1)


def test_no_secret_data_or_url_credentials_reach_a_page(scene: Scene) -> None:
    pages = [get(scene, p).text for p in ("/applications", "/applications/argocd/guestbook",
                                          "/rollouts", "/rollouts/default/web")]
    for text in pages:
        assert "s3cr3t-token" not in text
        assert "aHVudGVyMi1zdXBlci1zZWNyZXQ=" not in text
    assert "https://***@git.example.com/r.git" in pages[1]
    assert "Secret</strong> db-password" in pages[1]  # its name, never its data


def test_rollout_page_marks_the_current_step(scene: Scene) -> None:
    text = get(scene, "/rollouts/default/web").text
    steps = re.findall(r'<li class="(\w+)" data-step="(\d)">([^<]*)</li>', text)
    assert [(s, i) for s, i, _ in steps] == [
        ("done", "0"), ("current", "1"), ("pending", "2"), ("pending", "3")
    ]
    assert steps[0][2] == "setWeight: 25"
    assert re.search(r'id="rollout-step">1/4<', text)
    assert "CanaryPauseStep" in text


def test_rollout_page_lists_replica_sets_per_revision(scene: Scene) -> None:
    text = get(scene, "/rollouts/default/web").text
    table = re.search(r'<table id="rollout-sets">(.*?)</table>', text, re.S)
    assert table is not None
    rows = re.findall(r"<tr><td>(web-\w+)</td><td>(\d+)</td><td>(\w*)</td>", table.group(1))
    assert [(rev, role) for _, rev, role in rows] == [("2", "canary"), ("1", "stable")]
    assert rows[0][0] == f"web-{scene.canary_hash}"


def test_analysis_chart_carries_measurements_and_thresholds(scene: Scene) -> None:
    text = get(scene, "/rollouts/default/web").text
    found = re.search(r'data-metric="error-rate" data-chart="([^"]*)"', text)
    assert found is not None
    data = json.loads(found.group(1).replace("&#34;", '"').replace("&quot;", '"'))
    assert [p[1] for p in data["points"]] == [0.01, 0.02, 0.03]
    assert [p[2] for p in data["points"]] == ["Successful"] * 3
    assert data["success"] == 0.05 and data["failure"] == 0.2


def test_missing_objects_are_404_pages(scene: Scene) -> None:
    assert get(scene, "/rollouts/default/nope").status_code == 404
    assert get(scene, "/applications/argocd/nope").status_code == 404


def test_promotions_page_has_its_place(scene: Scene) -> None:
    page = get(scene, "/promotions")
    assert page.status_code == 200 and "Promotions" in page.text


def test_a_failed_runs_chart_marks_where_the_rollout_aborts(scene: Scene) -> None:
    run = scene.harness.runs()[0]
    failing = [{"phase": "Failed", "value": "[0.3]", "startedAt": "2026-01-01T00:00:30Z",
                "finishedAt": "2026-01-01T00:00:31Z"}]
    result = run["status"]["metricResults"][0]
    status = {**{k: v for k, v in run["status"].items() if k != "completedAt"}, "phase": "Failed",
              "metricResults": [{**result, "phase": "Failed",
                                 "measurements": result["measurements"] + failing}]}
    scene.harness.cluster.patch_status(API, "AnalysisRun", run["metadata"]["name"], "default",
                                       status)
    text = get(scene, "/rollouts/default/web").text
    found = re.search(r'data-metric="error-rate" data-chart="([^"]*)"', text)
    assert found is not None
    data = json.loads(found.group(1).replace("&#34;", '"').replace("&quot;", '"'))
    assert data["points"][-1][1:] == [0.3, "Failed"]
    assert data["points"][-1][1] >= data["failure"]
    # Headway writes no completedAt: the run ended with the measurement that failed it
    assert data["markers"] == [{"at": data["points"][-1][0], "label": "run Failed: rollout aborts"}]


def test_malformed_objects_show_what_they_can_never_a_server_error(scene: Scene) -> None:
    cluster = scene.harness.cluster
    broken = {"apiVersion": API, "kind": "Application",
              "metadata": {"name": "broken", "namespace": "argocd"},
              "spec": {"project": 7, "source": "not a mapping", "ignoreDifferences": "x"}}
    cluster.apply(broken, field_manager="test", force=True)
    cluster.patch_status(API, "Application", "broken", "argocd", {
        "sync": "Synced", "history": 5, "resources": "x", "conditions": [1],
        "operationState": {"phase": "Running", "wave": 3, "operation": {"retry": "x"}},
    })
    run = scene.harness.runs()[0]
    cluster.patch_status(API, "AnalysisRun", run["metadata"]["name"], "default",
                         {"phase": "Failed", "metricResults": 5})
    for path in ("/applications", "/applications/argocd/broken",
                 "/applications/argocd/broken/body", "/rollouts/default/web",
                 "/rollouts/default/web/body"):
        answer = get(scene, path)
        assert answer.status_code == 200, (path, answer.text[:300])
        assert "Internal Server Error" not in answer.text
    assert 'data-app="argocd/broken"' in get(scene, "/applications").text


def test_a_blue_green_rollout_shows_its_active_and_preview(scene: Scene) -> None:
    from controllers.rollout_harness import rollout, service

    h = scene.harness
    strategy = {"activeService": "bg-active", "previewService": "bg-preview",
                "autoPromotionEnabled": False}
    h.apply(service("bg-active", app="bg"))
    h.apply(service("bg-preview", app="bg"))
    h.apply(rollout("bg", replicas=2, blue_green=strategy))
    h.settle("bg")
    h.apply(rollout("bg", image="app:v2", replicas=2, blue_green=strategy))
    h.settle("bg")
    status = h.status("bg")
    text = get(scene, "/rollouts/default/bg").text
    active = re.search(r'id="rollout-active">(\w+)<', text)
    preview = re.search(r'id="rollout-preview">(\w+)<', text)
    assert active is not None and preview is not None
    assert active.group(1) == status["blueGreen"]["activeSelector"] == status["stableRS"]
    assert preview.group(1) == status["blueGreen"]["previewSelector"] == status["currentPodHash"]
    assert active.group(1) != preview.group(1)


def test_a_row_of_the_list_is_served_alone_and_empty_once_gone(scene: Scene) -> None:
    row = get(scene, "/applications/argocd/guestbook/row").text
    assert row.startswith('<tr id="app-row/argocd/guestbook"') and "OutOfSync" in row
    assert get(scene, "/applications/argocd/nope/row").text == ""
