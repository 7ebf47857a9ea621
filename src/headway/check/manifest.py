"""Small readers over raw manifests (plain dicts as loaded from YAML).

Every reader tolerates a malformed object (a list where a map belongs, a missing field) and
returns an empty value, so one broken manifest never stops the other checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

__all__ = [
    "WAVE_ANNOTATION",
    "annotation",
    "annotations_of",
    "app_sources",
    "as_dict",
    "as_list",
    "container_specs",
    "group_of",
    "labels_of",
    "name_of",
    "namespace_of",
    "normalize_repo_url",
    "pod_template",
    "resource_sync_options",
    "selector_matches",
    "sync_wave",
]

WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS_ANNOTATION = "argocd.argoproj.io/sync-options"


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _meta(obj: Any) -> dict[str, Any]:
    return as_dict(as_dict(obj).get("metadata"))


def annotations_of(obj: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in as_dict(_meta(obj).get("annotations")).items()}


def annotation(obj: Any, key: str) -> str | None:
    """`annotations_of(obj).get(key)` without copying every annotation, for a prefixed key
    (one with a `/`): a key YAML reads as a number, a date or a boolean, whose text
    `annotations_of` would give, never holds a `/`, so only the string key can match."""
    annotations = _meta(obj).get("annotations")
    if not isinstance(annotations, dict) or key not in annotations:
        return None
    return str(annotations[key])


def labels_of(obj: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in as_dict(_meta(obj).get("labels")).items()}


def name_of(obj: Any) -> str:
    return str(_meta(obj).get("name") or "")


def namespace_of(obj: Any) -> str:
    return str(_meta(obj).get("namespace") or "")


def group_of(api_version: Any) -> str:
    """`apps/v1` -> `apps`; `v1` -> `` (the core group)."""
    text = str(api_version or "")
    return text.rsplit("/", 1)[0] if "/" in text else ""


def sync_wave(obj: Any) -> int:
    """The Argo CD sync wave (default 0); an unparsable value counts as 0, as Argo CD does."""
    raw = (annotation(obj, WAVE_ANNOTATION) or "0").strip()
    try:
        return int(raw)
    except ValueError:
        return 0


def resource_sync_options(obj: Any) -> set[str]:
    """The per-resource `argocd.argoproj.io/sync-options` (comma separated)."""
    raw = annotation(obj, SYNC_OPTIONS_ANNOTATION) or ""
    return {part.strip() for part in raw.split(",") if part.strip()}


def app_sources(app: Any) -> list[dict[str, Any]]:
    """An Application's sources: `spec.sources`, or `[spec.source]`."""
    spec = as_dict(as_dict(app).get("spec"))
    sources = [as_dict(s) for s in as_list(spec.get("sources"))]
    if sources:
        return sources
    single = as_dict(spec.get("source"))
    return [single] if single else []


def pod_template(obj: Any) -> dict[str, Any]:
    """The pod template of a workload (Deployment, Rollout, Job, StatefulSet...)."""
    spec = as_dict(as_dict(obj).get("spec"))
    if as_dict(obj).get("kind") == "CronJob":
        spec = as_dict(as_dict(as_dict(spec.get("jobTemplate")).get("spec")))
    return as_dict(spec.get("template"))


def container_specs(obj: Any) -> Iterator[dict[str, Any]]:
    pod_spec = as_dict(pod_template(obj).get("spec"))
    for key in ("initContainers", "containers"):
        for container in as_list(pod_spec.get(key)):
            if isinstance(container, dict):
                yield container


def selector_matches(selector: Any, pod_labels: dict[str, str]) -> bool:
    """Whether a label selector matches `pod_labels`.

    Accepts both a plain map (Service `spec.selector`) and a LabelSelector with
    `matchLabels`/`matchExpressions`. An empty selector matches nothing here: for a
    Service that is the Kubernetes meaning, and for the other checks it is the safe one.
    """
    sel = as_dict(selector)
    if "matchLabels" in sel or "matchExpressions" in sel:
        match = {str(k): str(v) for k, v in as_dict(sel.get("matchLabels")).items()}
        expressions = [as_dict(e) for e in as_list(sel.get("matchExpressions"))]
    else:
        match = {str(k): str(v) for k, v in sel.items()}
        expressions = []
    if not match and not expressions:
        return False
    if any(pod_labels.get(k) != v for k, v in match.items()):
        return False
    return all(_expression_matches(e, pod_labels) for e in expressions)


def _expression_matches(expression: dict[str, Any], pod_labels: dict[str, str]) -> bool:
    key = str(expression.get("key", ""))
    operator = str(expression.get("operator", ""))
    values = {str(v) for v in as_list(expression.get("values"))}
    if operator == "In":
        return pod_labels.get(key) in values
    if operator == "NotIn":
        return pod_labels.get(key) not in values
    if operator == "Exists":
        return key in pod_labels
    if operator == "DoesNotExist":
        return key not in pod_labels
    return False


def normalize_repo_url(url: str) -> str:
    """`git@github.com:Org/Repo.git`, `https://github.com/org/repo/` -> `github.com/org/repo`."""
    text = url.strip().lower()
    text = re.sub(r"^[a-z+]+://", "", text)
    text = re.sub(r"^[^@/]+@", "", text)
    if re.match(r"^[^/]+:[^0-9]", text):
        text = text.replace(":", "/", 1)
    return text.removesuffix("/").removesuffix(".git")
