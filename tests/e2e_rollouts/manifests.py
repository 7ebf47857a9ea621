"""Manifests of the end-to-end rollout tests, as a GitOps repository written for Argo Rollouts
and Istio would hold them: a Rollout of examples/app, its Services, an Istio VirtualService and
AnalysisTemplates (the built-in traffic provider, or Prometheus)."""

from __future__ import annotations

from typing import Any

from e2e_rollouts.stage import API, IMAGE, ISTIO
from headway.model.obj import Obj

CANARY_HASH_ARG = [{"name": "canary-hash", "valueFrom": {"podTemplateHashValue": "Latest"}}]


def container(version: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "name": "app",
        "image": f"{IMAGE}:{version}",
        "ports": [{"containerPort": 8080}],
        "env": [{"name": key, "value": value} for key, value in (env or {}).items()],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 1},
    }


def rollout(
    version: str, strategy: dict[str, Any], env: dict[str, str] | None = None, replicas: int = 2
) -> Obj:
    return {
        "apiVersion": API,
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "terminationGracePeriodSeconds": 2,
                    "containers": [container(version, env)],
                },
            },
            "strategy": strategy,
        },
    }


def routed_canary(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "canary": {
            "stableService": "web-stable",
            "canaryService": "web-canary",
            "trafficRouting": {"istio": {"virtualService": {"name": "web", "routes": ["primary"]}}},
            "scaleDownDelaySeconds": 0,
            "abortScaleDownDelaySeconds": 1,  # 0 would keep the canary pods (as in Argo)
            "steps": steps,
        }
    }


def analysis_step(template: str) -> dict[str, Any]:
    return {"analysis": {"templates": [{"templateName": template}], "args": CANARY_HASH_ARG}}


def service(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }


def virtual_service(name: str, hosts: list[tuple[str, int]]) -> Obj:
    route = [{"destination": {"host": host}, "weight": weight} for host, weight in hosts]
    return {
        "apiVersion": ISTIO,
        "kind": "VirtualService",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"hosts": [name], "http": [{"name": "primary", "route": route}]},
    }


def canary_mesh() -> list[Obj]:
    """The two Services and the VirtualService a routed canary needs."""
    return [
        service("web-stable"),
        service("web-canary"),
        virtual_service("web", [("web-stable", 100), ("web-canary", 0)]),
    ]


def template(name: str, *metrics: dict[str, Any]) -> Obj:
    return {
        "apiVersion": API,
        "kind": "AnalysisTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"args": [{"name": "canary-hash"}], "metrics": list(metrics)},
    }


def traffic_metric(name: str, metric: str, condition: str, **schedule: Any) -> dict[str, Any]:
    """A `headway.dev/traffic` metric scoped to the canary's hash; no `address`: the
    controller's default, the runtime's metricsAddress, is what it reads. A measurement
    taken before the revision served a request is empty, which fails it (Headway's
    onEmpty default): give such a metric an `initialDelay` or put a pause before it."""
    plugin = {"metric": metric, "podTemplateHash": "{{args.canary-hash}}", "window": "5s"}
    return {
        "name": name,
        "successCondition": condition,
        "provider": {"plugin": {"headway.dev/traffic": plugin}},
        **schedule,
    }


def prometheus_metric(name: str, address: str, query: str, **schedule: Any) -> dict[str, Any]:
    return {
        "name": name,
        "provider": {"prometheus": {"address": address, "query": query, "timeout": 3}},
        **schedule,
    }
