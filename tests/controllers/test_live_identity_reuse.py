"""The identity of an app's live objects (what the comparison cache keys a comparison by) is
worked out once per read of the store and handed on with every reused answer; after any live
change the comparison is made again, exactly as a cold one.

Differential, not timed: after each step of a sequence of live changes - a resourceVersion
bump with drifted data, a status change that turns health, an object deleted and created
again (new uid), an object added with the app's label, its owner changed, an object adopted
under a desired key - (1) the identity an answer carries equals the identity recomputed from
its objects, and (2) the long-running controller's comparison equals the one a fresh
controller (empty caches) makes. Each change alters the comparison from the step before, so
a stale identity (the last comparison found again) fails (2). bench/bench_refresh.py
measures what it saves.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app_harness import (
    APPS_NS,
    Harness,
    application,
    config_map,
    deployment,
    make_harness,
    manifests,
    phase,
)

from headway.clock import VirtualClock
from headway.controllers.app.controller import ApplicationController
from headway.controllers.app.live import LiveObjects, LiveReader, live_identity
from headway.controllers.app.sources import SourceReader
from headway.controllers.cluster_registry import ClusterRegistry
from headway.source.git import GitCache
from headway.sync.comparison import TRACKING_LABEL, Comparison, prepare_desired


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


def _synced(tmp_path: Path, clock: VirtualClock) -> Harness:
    objects = [config_map("a"), config_map("b"), deployment("web")]
    h = make_harness(tmp_path, clock, {"apps/web/all.yaml": manifests(*objects)})
    h.install(application("web", h.remote.url, path="apps/web", automated={}))
    h.run("web", lambda s: phase(s) == "Succeeded" and s["sync"]["status"] == "Synced")
    return h


def _cold(h: Harness) -> Comparison:
    """What a restarted controller compares (no cache of any kind)."""
    controller = ApplicationController(
        store=h.store,
        clusters=ClusterRegistry(h.store),
        sources=SourceReader(git=GitCache(h.cache_dir), clock=h.clock),
        clock=h.clock,
    )
    cold, errors = controller.compare("web", APPS_NS)
    assert cold is not None, errors
    return cold


def _summary(comparison: Comparison) -> dict[str, Any]:
    return {
        "sync": comparison.sync_status,
        "health": comparison.health.status,
        "resources": [r.to_status() for r in comparison.resources],
        "diffs": {
            str(k): (d.modified, d.diff_lines) for k, d in sorted(comparison.diffs.items())
        },
        "live": sorted(
            (str(k), o["metadata"].get("uid"), o["metadata"].get("resourceVersion"))
            for k, o in comparison.live.items()
        ),
    }


def _extra(name: str, **meta: Any) -> dict[str, Any]:
    """A ConfigMap not in Git, labelled as the app's."""
    labels = {TRACKING_LABEL: "web"}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "demo", "labels": labels, **meta},
        "data": {"k": name},
    }


def _drift(h: Harness) -> None:
    live = h.get("ConfigMap", "a")
    h.store.update({**live, "data": {"k": "drifted"}}, field_manager="someone")


def _owned(h: Harness) -> None:
    live = h.get("ConfigMap", "stray")
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "u-1"}
    h.store.update({**live, "metadata": {**live["metadata"], "ownerReferences": [owner]}},
                   field_manager="someone")


def _recreate_b(h: Harness) -> None:
    desired = prepare_desired([config_map("b")], app="web", namespace="demo")
    h.store.apply(desired[0], field_manager="someone")


# Each step changes what the comparison says.
STEPS: list[tuple[str, Callable[[Harness], None]]] = [
    ("data drifted (new resourceVersion)", _drift),
    ("status turns health", lambda h: h.make_ready("web")),
    ("object deleted", lambda h: h.store.delete("v1", "ConfigMap", "b", "demo")),
    ("object added with the app's label", lambda h: h.store.apply(
        _extra("stray"), field_manager="someone")),
    ("owner added: no longer top-level", _owned),
    ("deleted object back, new uid", _recreate_b),
]


def test_after_each_live_change_the_comparison_is_the_cold_one(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _synced(tmp_path, clock)
    warm = h.controller
    last, _ = warm.compare("web", APPS_NS)
    assert last is not None
    for label, change in STEPS:
        change(h)
        after, errors = warm.compare("web", APPS_NS)
        assert after is not None, errors
        cold = _summary(_cold(h))
        assert _summary(after) == cold, label
        # The step changed the comparison: the last one, reused, would have failed above.
        # (Taking back a change may find an earlier entry, keyed by the same identity.)
        assert cold != _summary(last), f"{label}: the step must change the comparison"
        last = after
        hits = warm.comparisons.hits
        again, _ = warm.compare("web", APPS_NS)  # nothing moved since: one lookup
        assert again is after and warm.comparisons.hits == hits + 1, label


def test_a_reused_answer_hands_on_its_reads_identity_which_is_its_objects(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _synced(tmp_path, clock)
    reader = LiveReader(h.store)
    desired = prepare_desired(
        [config_map("a"), config_map("b"), deployment("web")], app="web", namespace="demo"
    )
    first = reader.managed("web", desired)
    again = reader.managed("web", desired)
    assert isinstance(again, LiveObjects)
    assert again is not first and again.identity is first.identity  # reused, not rebuilt
    for label, change in STEPS:
        change(h)
        answer = reader.managed("web", desired)
        assert answer.identity == live_identity(answer), label
        assert answer.identity != first.identity, label
        first = answer


def test_an_adopted_object_under_a_desired_key_is_followed_by_identity(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """An object without the app's label (followed by the store's revision, not the label's):
    its changes reach the identity too."""
    h = _synced(tmp_path, clock)
    h.store.apply(
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "adopted", "namespace": "demo"}, "data": {"k": "1"}},
        field_manager="someone",
    )
    reader = LiveReader(h.store)
    desired = prepare_desired([config_map("adopted")], app="web", namespace="demo")
    before = reader.managed("web", desired)
    live = h.get("ConfigMap", "adopted")
    h.store.update({**live, "data": {"k": "2"}}, field_manager="someone")
    after = reader.managed("web", desired)
    assert after.identity == live_identity(after) != before.identity
