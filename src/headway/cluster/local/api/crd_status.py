"""The status the API server gives a CustomResourceDefinition. Purely computational.

Kubernetes' naming and establishing controllers accept a CRD's names and then mark it
`Established` once its kind is served; `kubectl wait --for condition=established` waits for
that. The store serves a CRD's kind in the same write that stores it, so it writes this
status in that write too: the CRD is established the moment it exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.model.obj import Obj

__all__ = ["served_status"]

# (type, reason, message), as kube-apiserver words them for a CRD whose names are free.
_CONDITIONS = (
    ("NamesAccepted", "NoConflicts", "no conflicts found"),
    ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
)


def served_status(crd: Obj, *, now: str) -> dict[str, Any]:
    """`crd`'s status once its kind is served: its accepted names, the `NamesAccepted` and
    `Established` conditions (a condition already true keeps its transition time), and the
    versions ever stored. Other status fields are kept."""
    status: dict[str, Any] = dict(crd.get("status") or {})
    spec: Mapping[str, Any] = crd.get("spec") or {}
    previous = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}
    conditions = [c for t, c in previous.items() if t not in {t for t, _, _ in _CONDITIONS}]
    for kind, reason, message in _CONDITIONS:
        before = previous.get(kind) or {}
        since = before.get("lastTransitionTime") if before.get("status") == "True" else None
        conditions.append({"type": kind, "status": "True", "reason": reason,
                           "message": message, "lastTransitionTime": since or now})
    status["acceptedNames"] = _accepted_names(spec.get("names") or {})
    status["conditions"] = conditions
    status["storedVersions"] = _stored_versions(spec, status.get("storedVersions"))
    return status


def _accepted_names(names: Mapping[str, Any]) -> dict[str, Any]:
    kind = str(names.get("kind", ""))
    accepted: dict[str, Any] = {
        "kind": kind,
        "listKind": names.get("listKind") or f"{kind}List",
        "plural": names.get("plural", ""),
        "singular": names.get("singular") or kind.lower(),
    }
    for optional in ("shortNames", "categories"):
        if names.get(optional):
            accepted[optional] = list(names[optional])
    return accepted


def _stored_versions(spec: Mapping[str, Any], before: Any) -> list[str]:
    """Every version objects were ever stored at: the previous list, then the storage one."""
    out = [v for v in before if isinstance(v, str)] if isinstance(before, list) else []
    for version in spec.get("versions") or []:
        name = version.get("name") if isinstance(version, dict) else None
        if isinstance(name, str) and version.get("storage") and name not in out:
            out.append(name)
    return out
