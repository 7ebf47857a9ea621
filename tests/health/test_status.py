from __future__ import annotations

from typing import Any

from headway.health import HealthRegistry, HealthResult, HealthStatus, assess, worst


def test_order_is_argo_cds_health_order() -> None:
    assert [s.value for s in HealthStatus] == [
        "Healthy",
        "Suspended",
        "Progressing",
        "Missing",
        "Degraded",
        "Unknown",
    ]


def test_worst_picks_the_least_healthy() -> None:
    assert worst([HealthStatus.MISSING, HealthStatus.DEGRADED]) is HealthStatus.DEGRADED
    assert worst([HealthStatus.SUSPENDED, HealthStatus.HEALTHY]) is HealthStatus.SUSPENDED
    assert worst([HealthStatus.DEGRADED, HealthStatus.UNKNOWN]) is HealthStatus.UNKNOWN
    assert worst([HealthStatus.PROGRESSING, HealthStatus.SUSPENDED]) is HealthStatus.PROGRESSING
    assert worst([]) is HealthStatus.HEALTHY


def test_kinds_without_a_check_have_no_health() -> None:
    assert assess({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}) is None
    # Same kind name in another group is a different resource.
    assert assess({"apiVersion": "example.com/v1", "kind": "Deployment"}) is None


def test_pending_deletion_is_progressing_unless_held_by_hook_finalizer() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "deletionTimestamp": "2026-01-01T00:00:00Z"},
    }
    assert assess(obj) == HealthResult(HealthStatus.PROGRESSING, "Pending deletion")
    obj["metadata"]["finalizers"] = ["argocd.argoproj.io/hook-finalizer"]
    assert assess(obj) is None


def test_registry_reports_which_kinds_it_can_assess() -> None:
    registry = HealthRegistry()
    assert registry.has_check(("apps", "Deployment"))
    assert not registry.has_check(("", "ConfigMap"))


def test_result_renders_status_and_message() -> None:
    assert str(HealthResult(HealthStatus.DEGRADED, "boom")) == "Degraded (boom)"
    assert str(HealthResult(HealthStatus.HEALTHY)) == "Healthy"
