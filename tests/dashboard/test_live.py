"""The event stream: a change in the store reaches an open stream as its page topics."""

from __future__ import annotations

import json
import queue
import threading

import httpx2
from dashboard_env import API, Scene

from headway.dashboard.live import WATCHED, topics_of


def read_events(url: str, into: queue.Queue[list[str]], opened: threading.Event) -> None:
    with httpx2.stream("GET", url + "/events", timeout=60) as stream:
        event = ""
        for line in stream.iter_lines():
            if line.startswith(": connected"):
                opened.set()
            elif line.startswith("event: "):
                event = line[len("event: "):]
            elif line.startswith("data: ") and event == "changed":
                into.put(json.loads(line[len("data: "):]))
                return


def test_a_status_change_streams_its_topics(scene: Scene) -> None:
    got: queue.Queue[list[str]] = queue.Queue()
    opened = threading.Event()
    reader = threading.Thread(target=read_events, args=(scene.served.url, got, opened),
                              daemon=True)
    reader.start()
    assert opened.wait(30), "the stream did not open"
    scene.harness.patch_status({"message": "changed by the test"})
    topics = got.get(timeout=30)
    assert "rollout/default/web" in topics and "rollouts" in topics


def test_topics_reach_a_rollout_from_its_runs_sets_and_pods() -> None:
    owner = [{"kind": "Rollout", "name": "web", "uid": "u"}]
    run = {"kind": "AnalysisRun", "metadata": {"namespace": "ns", "name": "web-abc-1",
                                               "ownerReferences": owner}}
    pod = {"kind": "Pod", "metadata": {"namespace": "ns", "name": "web-abc-x1",
                                       "ownerReferences": [{"kind": "ReplicaSet",
                                                            "name": "web-abc"}]}}
    app = {"kind": "Application", "metadata": {"namespace": "argocd", "name": "guestbook"}}
    experiment = {"kind": "Experiment", "metadata": {"namespace": "ns", "name": "web-abc-2-0",
                                                     "ownerReferences": owner}}
    assert topics_of(run) == {"rollout/ns/web"}
    assert topics_of(experiment) == {"rollout/ns/web"}
    assert ("argoproj.io/v1alpha1", "Experiment") in WATCHED
    assert topics_of(pod) == {"rollout/ns/web"}
    assert topics_of(app) == {"app/argocd/guestbook"}  # its row and its page
    assert topics_of(app, "ADDED") == topics_of(app, "DELETED") == {"apps", "app/argocd/guestbook"}


def test_an_application_change_streams_its_topics(scene: Scene) -> None:
    got: queue.Queue[list[str]] = queue.Queue()
    opened = threading.Event()
    threading.Thread(target=read_events, args=(scene.served.url, got, opened),
                     daemon=True).start()
    assert opened.wait(30)
    app = scene.harness.cluster.get(API, "Application", "guestbook", "argocd")
    scene.harness.cluster.patch_status(API, "Application", "guestbook", "argocd",
                                       {**app["status"], "reconciledAt": "2026-01-02T00:00:00Z"})
    topics = got.get(timeout=30)
    assert "app/argocd/guestbook" in topics
