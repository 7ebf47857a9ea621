"""The Argo CD Application `source` mapping, as raw TypedDicts (field names as in the CRD)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, cast

__all__ = [
    "ApplicationSource",
    "DirectorySpec",
    "HelmParameter",
    "HelmSpec",
    "KustomizeReplica",
    "KustomizeSpec",
    "raw_sources",
    "spec_section",
]


class DirectorySpec(TypedDict, total=False):
    recurse: bool
    include: str
    exclude: str
    disableExtensionFilter: bool


class HelmParameter(TypedDict, total=False):
    name: str
    value: str
    forceString: bool


class HelmSpec(TypedDict, total=False):
    releaseName: str
    valueFiles: list[str]
    values: str
    valuesObject: dict[str, Any]
    parameters: list[HelmParameter]
    ignoreMissingValueFiles: bool
    skipCrds: bool
    skipTests: bool
    version: str
    namespace: str
    passCredentials: bool


class KustomizeReplica(TypedDict):
    name: str
    count: int


class KustomizeSpec(TypedDict, total=False):
    namePrefix: str
    nameSuffix: str
    images: list[str]
    replicas: list[KustomizeReplica]
    patches: list[dict[str, Any]]
    components: list[str]
    commonLabels: dict[str, str]
    commonAnnotations: dict[str, str]
    forceCommonLabels: bool
    forceCommonAnnotations: bool
    namespace: str


class ApplicationSource(TypedDict, total=False):
    repoURL: str
    path: str
    targetRevision: str
    chart: str
    ref: str
    directory: DirectorySpec
    helm: HelmSpec
    kustomize: KustomizeSpec
    plugin: dict[str, Any]  # a config management plugin: name, env, parameters


def spec_section(source: ApplicationSource, name: str) -> dict[str, Any]:
    """`source[name]` as a mapping; absent or null sections read as empty."""
    value = source.get(name)
    return dict(value) if isinstance(value, dict) else {}


def raw_sources(raw: Mapping[str, Any]) -> list[ApplicationSource]:
    """`spec.sources` when given (Argo CD then ignores `source`), else `[spec.source]`."""
    spec = raw.get("spec") or {}
    listed = spec.get("sources")
    if isinstance(listed, list) and listed:
        return [cast(ApplicationSource, s) for s in listed if isinstance(s, dict)]
    single = spec.get("source")
    return [cast(ApplicationSource, single)] if isinstance(single, dict) else []
