"""Situations users hit when they bring the public Argo example repositories (issue 9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_harness import application, make_harness, manifests, message, phase

from headway.clock import VirtualClock


def _done(s: dict[str, Any]) -> bool:
    return phase(s) in ("Succeeded", "Failed")


def _cluster_template(name: str) -> dict[str, Any]:
    metric = {
        "name": "ok",
        "successCondition": "result == 1",
        "provider": {"web": {"url": "http://127.0.0.1:1/ok", "jsonPath": "{$.ok}"}},
    }
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ClusterAnalysisTemplate",
        "metadata": {"name": name},
        "spec": {"metrics": [metric]},
    }


@pytest.mark.parametrize("options", [(), ("CreateNamespace=true",)])
def test_a_cluster_scoped_template_syncs_with_and_without_create_namespace(
    tmp_path: Path, clock: VirtualClock, options: tuple[str, ...]
) -> None:
    """A namespaced app that carries a ClusterAnalysisTemplate: the template has no namespace
    whether or not the app asks for its namespace to be created (it used to wait forever for
    `ClusterAnalysisTemplate/<ns>/error-rate`, which cannot exist)."""
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(_cluster_template("error-rate"))})
    namespace = "brand-new" if options else "demo"
    h.install(
        application(
            "shop", h.remote.url, path="app", namespace=namespace, automated={}, options=options
        )
    )
    status = h.run("shop", _done)
    assert phase(status) == "Succeeded", message(status)
    h.store.get("argoproj.io/v1alpha1", "ClusterAnalysisTemplate", "error-rate", None)
    results = status["operationState"]["syncResult"]["resources"]
    template = [r for r in results if r["kind"] == "ClusterAnalysisTemplate"]
    assert [r["namespace"] for r in template] == [""]
