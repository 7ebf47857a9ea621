"""Which served kinds the Kubernetes backend keeps in view: those it can list and watch."""

from __future__ import annotations

from headway.cluster.kube.discovery import kinds_in


def test_only_kinds_served_with_list_and_watch_are_kept_in_view() -> None:
    # metrics.k8s.io (metrics-server on EKS, the local runtime's meter) serves get/list and
    # no watch: before, it was listed among the kinds, the watch on it broke, and every
    # Application's live state became a ComparisonError (found by test_sync_through_api).
    listed = kinds_in({"groupVersion": "metrics.k8s.io/v1beta1", "resources": [
        {"name": "pods", "kind": "PodMetrics", "namespaced": True, "verbs": ["get", "list"]},
    ]})
    reviews = kinds_in({"groupVersion": "authorization.k8s.io/v1", "resources": [
        {"name": "selfsubjectaccessreviews", "kind": "SelfSubjectAccessReview",
         "namespaced": False, "verbs": ["create"]},
    ]})
    watched = kinds_in({"groupVersion": "v1", "resources": [
        {"name": "configmaps", "kind": "ConfigMap", "namespaced": True,
         "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
    ]})
    assert [k.listable for k in listed + reviews + watched] == [False, False, True]
