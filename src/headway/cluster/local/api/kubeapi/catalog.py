"""What the API serves: every kind with its plural, scope, subresources and short names.

Built from the store's discovery plus the CustomResourceDefinitions it holds (their
`subresources`, `additionalPrinterColumns`, `shortNames`). Purely computational.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from headway.cluster.local.api.kinds import SHORT_NAMES, split_api_version
from headway.cluster.protocol import ResourceKind
from headway.model.obj import Obj

__all__ = [
    "REVIEW_KINDS",
    "ApiKind",
    "Catalog",
    "PrinterColumn",
    "ScalePaths",
    "version_priority",
]

_IN_CATEGORY_ALL = frozenset({
    "pods", "services", "deployments", "replicasets", "statefulsets", "daemonsets", "jobs",
    "cronjobs", "horizontalpodautoscalers",
})
# Built-in kinds whose status is written only through the status subresource.
_NO_STATUS_SUBRESOURCE = frozenset({
    "configmaps", "secrets", "serviceaccounts", "endpoints", "events", "roles", "rolebindings",
    "clusterroles", "clusterrolebindings", "leases", "applications", "appprojects",
    "analysistemplates", "clusteranalysistemplates",
})
VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ScalePaths:
    """Where a kind keeps what its scale subresource shows (JSON paths, `.spec.replicas`)."""

    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    label_selector: str = ""  # "" -> the string form of `.spec.selector`


@dataclass(frozen=True)
class PrinterColumn:
    name: str
    type: str
    json_path: str
    description: str = ""
    priority: int = 0


@dataclass(frozen=True)
class ApiKind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    has_status: bool = True
    scale: ScalePaths | None = None
    columns: tuple[PrinterColumn, ...] = ()
    builtin: bool = True
    review: bool = False  # an access or identity review: create-only, answered, not stored

    @property
    def verbs(self) -> tuple[str, ...]:
        return ("create",) if self.review else VERBS

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def categories(self) -> tuple[str, ...]:
        return ("all",) if self.plural in _IN_CATEGORY_ALL else ()


# Who-am-I and may-I questions (`kubectl auth can-i`, `auth whoami`, k9s): answered, never
# stored (see `reviews`).
REVIEW_KINDS = tuple(
    ApiKind(group=group, version="v1", kind=kind, plural=plural, namespaced=False,
            has_status=False, review=True)
    for group, kind, plural in (
        ("authorization.k8s.io", "SelfSubjectAccessReview", "selfsubjectaccessreviews"),
        ("authorization.k8s.io", "SelfSubjectRulesReview", "selfsubjectrulesreviews"),
        ("authentication.k8s.io", "SelfSubjectReview", "selfsubjectreviews"),
    )
)

_BUILTIN_SCALE = {
    "deployments": ScalePaths(),
    "replicasets": ScalePaths(),
    "statefulsets": ScalePaths(),
    "rollouts": ScalePaths(label_selector=".status.selector"),
}


class Catalog:
    """Every served kind, found by group, version and plural."""

    def __init__(self, kinds: Iterable[ApiKind]) -> None:
        self.kinds = list(kinds)
        self._by_path = {(k.group, k.version, k.plural): k for k in self.kinds}

    @classmethod
    def build(cls, served: Iterable[ResourceKind], crds: Iterable[Obj]) -> Catalog:
        custom = {
            (group, version, plural): kind
            for crd in crds for (group, version, plural), kind in _crd_kinds(crd).items()
        }
        kinds = []
        for rk in served:
            group, version = split_api_version(rk.api_version)
            found = custom.get((group, version, rk.plural))
            kinds.append(found if found is not None else _builtin(rk, group, version))
        return cls([*kinds, *REVIEW_KINDS])

    def find(self, group: str, version: str, plural: str) -> ApiKind | None:
        return self._by_path.get((group, version, plural))

    def groups(self) -> dict[str, list[str]]:
        """Each non-core group with its versions, most preferred first."""
        versions: dict[str, list[str]] = {}
        for k in self.kinds:
            listed = versions.setdefault(k.group, [])
            if k.version not in listed:
                listed.append(k.version)
        return {g: sorted(v, key=version_priority) for g, v in versions.items() if g}

    def in_version(self, group: str, version: str) -> list[ApiKind]:
        return [k for k in self.kinds if (k.group, k.version) == (group, version)]


def _builtin(rk: ResourceKind, group: str, version: str) -> ApiKind:
    return ApiKind(
        group=group, version=version, kind=rk.kind, plural=rk.plural,
        namespaced=rk.namespaced, short_names=SHORT_NAMES.get(rk.plural, ()),
        has_status=rk.plural not in _NO_STATUS_SUBRESOURCE,
        scale=_BUILTIN_SCALE.get(rk.plural),
    )


def _crd_kinds(crd: Obj) -> dict[tuple[str, str, str], ApiKind]:
    spec: dict[str, Any] = crd.get("spec") or {}
    names: dict[str, Any] = spec.get("names") or {}
    group, kind, plural = spec.get("group"), names.get("kind"), names.get("plural")
    if not all(isinstance(v, str) for v in (group, kind, plural)):
        return {}
    found = {}
    for version in spec.get("versions") or []:
        if not isinstance(version, dict) or not isinstance(version.get("name"), str):
            continue
        subresources = version.get("subresources") or {}
        found[(str(group), version["name"], str(plural))] = ApiKind(
            group=str(group), version=version["name"], kind=str(kind), plural=str(plural),
            namespaced=spec.get("scope", "Namespaced") != "Cluster",
            short_names=tuple(str(n) for n in names.get("shortNames") or ()),
            has_status="status" in subresources,
            scale=_crd_scale(subresources.get("scale")),
            columns=_crd_columns(version.get("additionalPrinterColumns")),
            builtin=False,
        )
    return found


def _crd_scale(raw: Any) -> ScalePaths | None:
    if not isinstance(raw, dict):
        return None
    return ScalePaths(
        spec_replicas=str(raw.get("specReplicasPath") or ".spec.replicas"),
        status_replicas=str(raw.get("statusReplicasPath") or ".status.replicas"),
        label_selector=str(raw.get("labelSelectorPath") or ""),
    )


def _crd_columns(raw: Any) -> tuple[PrinterColumn, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(
        PrinterColumn(name=str(c["name"]), type=str(c.get("type", "string")),
                      json_path=str(c["jsonPath"]), description=str(c.get("description", "")),
                      priority=int(c.get("priority", 0) or 0))
        for c in raw
        if isinstance(c, dict) and isinstance(c.get("name"), str)
        and isinstance(c.get("jsonPath"), str)
    )


_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key putting versions in Kubernetes' order: v2, v1, v1beta2, v1beta1, v1alpha1."""
    match = _VERSION.match(version)
    if match is None:
        return (3, 0, 0, version)
    major, stage, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0), version)
