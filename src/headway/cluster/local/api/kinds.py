"""Discovery for the local store: the built-in kinds, plus kinds that CRDs add.

A kind is identified by its API group and name (`apps`, `Deployment`); an object stored
through one served version can be read through any other served version of the same group
and kind (the local store does no schema conversion; see docs/cluster.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import Invalid, UnknownKind
from headway.cluster.protocol import ResourceKind
from headway.model.obj import Obj

__all__ = [
    "BUILTIN_KINDS",
    "CRD_GROUP",
    "SHORT_NAMES",
    "KindTable",
    "ServedKind",
    "crd_kinds",
    "split_api_version",
    "validate_crd",
]

CRD_GROUP = "apiextensions.k8s.io"

# (apiVersion, kind, plural, namespaced)
_BUILTIN_ROWS: tuple[tuple[str, str, str, bool], ...] = (
    ("v1", "Namespace", "namespaces", False),
    ("v1", "Node", "nodes", False),
    ("v1", "Pod", "pods", True),
    ("v1", "Service", "services", True),
    ("v1", "Endpoints", "endpoints", True),
    ("v1", "ConfigMap", "configmaps", True),
    ("v1", "Secret", "secrets", True),
    ("v1", "ServiceAccount", "serviceaccounts", True),
    ("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True),
    ("v1", "PersistentVolume", "persistentvolumes", False),
    ("v1", "Event", "events", True),
    ("apps/v1", "Deployment", "deployments", True),
    ("apps/v1", "ReplicaSet", "replicasets", True),
    ("apps/v1", "StatefulSet", "statefulsets", True),
    ("apps/v1", "DaemonSet", "daemonsets", True),
    ("batch/v1", "Job", "jobs", True),
    ("batch/v1", "CronJob", "cronjobs", True),
    ("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True),
    ("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", True),
    ("networking.k8s.io/v1", "Ingress", "ingresses", True),
    ("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", True),
    ("rbac.authorization.k8s.io/v1", "Role", "roles", True),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False),
    ("coordination.k8s.io/v1", "Lease", "leases", True),
    ("argoproj.io/v1alpha1", "Rollout", "rollouts", True),
    ("argoproj.io/v1alpha1", "AnalysisTemplate", "analysistemplates", True),
    ("argoproj.io/v1alpha1", "ClusterAnalysisTemplate", "clusteranalysistemplates", False),
    ("argoproj.io/v1alpha1", "AnalysisRun", "analysisruns", True),
    ("argoproj.io/v1alpha1", "Experiment", "experiments", True),
    ("argoproj.io/v1alpha1", "Application", "applications", True),
    ("argoproj.io/v1alpha1", "AppProject", "appprojects", True),
    ("argoproj.io/v1alpha1", "ApplicationSet", "applicationsets", True),
    # Headway's promotion kinds (docs/promotion.md): a pipeline and one promotion in it.
    ("headway.dev/v1alpha1", "PromotionPipeline", "promotionpipelines", True),
    ("headway.dev/v1alpha1", "Promotion", "promotions", True),
    # One release across clusters in order (docs/multi-cluster.md).
    ("headway.dev/v1alpha1", "MultiClusterRollout", "multiclusterrollouts", True),
    # Istio's networking kinds that repositories carry, served without installing Istio's
    # CRDs: the local mesh (docs/local-mesh.md) realizes VirtualServices with Headway's own
    # routers and Gateways as listeners in front of them; DestinationRules and ServiceEntries
    # are stored for the repository's sake, and the mesh says what it does not realize.
    ("networking.istio.io/v1beta1", "VirtualService", "virtualservices", True),
    ("networking.istio.io/v1alpha3", "VirtualService", "virtualservices", True),
    ("networking.istio.io/v1", "VirtualService", "virtualservices", True),
    ("networking.istio.io/v1beta1", "DestinationRule", "destinationrules", True),
    ("networking.istio.io/v1alpha3", "DestinationRule", "destinationrules", True),
    ("networking.istio.io/v1", "DestinationRule", "destinationrules", True),
    ("networking.istio.io/v1beta1", "Gateway", "gateways", True),
    ("networking.istio.io/v1alpha3", "Gateway", "gateways", True),
    ("networking.istio.io/v1", "Gateway", "gateways", True),
    ("networking.istio.io/v1beta1", "ServiceEntry", "serviceentries", True),
    ("networking.istio.io/v1alpha3", "ServiceEntry", "serviceentries", True),
    ("networking.istio.io/v1", "ServiceEntry", "serviceentries", True),
)

# kubectl's short names of the built-in kinds (and the ones Argo's and Istio's CRDs declare),
# by plural: `headway get` and the API's discovery both read them from here.
SHORT_NAMES: dict[str, tuple[str, ...]] = {
    "pods": ("po",), "nodes": ("no",), "services": ("svc",), "namespaces": ("ns",),
    "configmaps": ("cm",),
    "endpoints": ("ep",), "events": ("ev",), "serviceaccounts": ("sa",),
    "persistentvolumeclaims": ("pvc",), "persistentvolumes": ("pv",),
    "deployments": ("deploy",), "replicasets": ("rs",), "statefulsets": ("sts",),
    "daemonsets": ("ds",), "cronjobs": ("cj",), "horizontalpodautoscalers": ("hpa",),
    "poddisruptionbudgets": ("pdb",), "ingresses": ("ing",), "networkpolicies": ("netpol",),
    "customresourcedefinitions": ("crd", "crds"), "rollouts": ("ro",),
    "analysisruns": ("ar",), "analysistemplates": ("at",),
    "clusteranalysistemplates": ("cat",), "applications": ("app", "apps"),
    "appprojects": ("appproj", "appprojs"), "applicationsets": ("appset", "appsets"),
    "virtualservices": ("vs",),
    "destinationrules": ("dr",), "gateways": ("gw",), "serviceentries": ("se",),
}

BUILTIN_KINDS: tuple[ResourceKind, ...] = tuple(
    ResourceKind(api_version=v, kind=k, plural=p, namespaced=n) for v, k, p, n in _BUILTIN_ROWS
)


def split_api_version(api_version: str) -> tuple[str, str]:
    """`apps/v1` -> (`apps`, `v1`); `v1` -> (``, `v1`)."""
    group, _, version = api_version.rpartition("/")
    return group, version


@dataclass(frozen=True)
class ServedKind:
    """A kind as the store keys it: group and kind, with every served version."""

    group: str
    kind: str
    plural: str
    namespaced: bool
    versions: tuple[str, ...]


def validate_crd(crd: Obj) -> None:
    """Raise `Invalid` naming the field when a CustomResourceDefinition cannot serve a kind."""
    name = (crd.get("metadata") or {}).get("name", "?")
    where = f"CustomResourceDefinition {name}"
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        raise Invalid(f"{where}: spec: required mapping")
    raw_names = spec.get("names")
    names: dict[str, Any] = raw_names if isinstance(raw_names, dict) else {}
    required = {"spec.group": spec.get("group"), "spec.names.kind": names.get("kind"),
                "spec.names.plural": names.get("plural")}
    for field, value in required.items():
        if not isinstance(value, str) or not value:
            raise Invalid(f"{where}: {field}: required string")
    if spec.get("scope", "Namespaced") not in ("Namespaced", "Cluster"):
        raise Invalid(f"{where}: spec.scope: must be Namespaced or Cluster, not {spec['scope']!r}")
    expected = f"{spec['names']['plural']}.{spec['group']}"
    if name != expected:
        raise Invalid(f"{where}: metadata.name: must be {expected!r} (plural.group)")
    versions = spec.get("versions")
    if not isinstance(versions, list) or not versions:
        raise Invalid(f"{where}: spec.versions: at least one version is required")
    for index, version in enumerate(versions):
        if not isinstance(version, dict) or not isinstance(version.get("name"), str):
            raise Invalid(f"{where}: spec.versions[{index}].name: required string")


def crd_kinds(crd: Obj) -> list[ResourceKind]:
    """The kinds one CustomResourceDefinition serves (one entry per served version)."""
    spec: dict[str, Any] = crd.get("spec") or {}
    names: dict[str, Any] = spec.get("names") or {}
    group, kind = spec.get("group"), names.get("kind")
    if not isinstance(group, str) or not isinstance(kind, str):
        return []
    plural = str(names.get("plural") or kind.lower() + "s")
    namespaced = spec.get("scope", "Namespaced") != "Cluster"
    return [
        ResourceKind(api_version=f"{group}/{v['name']}", kind=kind, plural=plural,
                     namespaced=namespaced)
        for v in spec.get("versions") or []
        if isinstance(v, dict) and isinstance(v.get("name"), str) and v.get("served", True)
    ]


class KindTable:
    """Resolves apiVersion/kind to the kind the store serves, or raises `UnknownKind`."""

    def __init__(self, kinds: Iterable[ResourceKind]) -> None:
        self._kinds = list(kinds)
        self._by_version = {(k.api_version, k.kind): k for k in self._kinds}

    @classmethod
    def with_crds(cls, crds: Iterable[Obj]) -> KindTable:
        builtin = {(k.api_version, k.kind) for k in BUILTIN_KINDS}
        extra = [
            k for crd in crds for k in crd_kinds(crd) if (k.api_version, k.kind) not in builtin
        ]
        return cls([*BUILTIN_KINDS, *extra])

    def all(self) -> list[ResourceKind]:
        return list(self._kinds)

    def knows(self, api_version: str, kind: str) -> bool:
        return (api_version, kind) in self._by_version

    def resolve(self, api_version: str, kind: str) -> ServedKind:
        found = self._by_version.get((api_version, kind))
        if found is None:
            raise UnknownKind(f"the cluster does not serve {kind} in {api_version or '(none)'}")
        group = found.group
        versions = tuple(
            split_api_version(k.api_version)[1]
            for k in self._kinds
            if k.kind == kind and k.group == group
        )
        return ServedKind(group=group, kind=kind, plural=found.plural,
                          namespaced=found.namespaced, versions=versions)
