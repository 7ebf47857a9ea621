"""An Application's source: repository, path or chart, and its Helm/Kustomize/directory/plugin
settings. Field names and defaults follow argo-cd `ApplicationSource` and friends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.model import schema as s
from headway.model.views import view

__all__ = [
    "SOURCE",
    "ApplicationSource",
    "DirectorySource",
    "HelmSource",
    "KustomizeSource",
    "argo_field_names",
]


@view
class HelmParameter:
    name: str | None
    value: str | None
    force_string: bool


@view
class HelmFileParameter:
    name: str | None
    path: str | None


@view
class HelmSource:
    release_name: str | None
    value_files: tuple[str, ...]
    values: str | None
    values_object: Mapping[str, Any] | None
    parameters: tuple[HelmParameter, ...]
    file_parameters: tuple[HelmFileParameter, ...]
    ignore_missing_value_files: bool
    skip_crds: bool
    skip_tests: bool
    skip_schema_validation: bool
    pass_credentials: bool
    version: str | None
    namespace: str | None
    kube_version: str | None
    api_versions: tuple[str, ...]


@view
class KustomizeReplica:
    name: str
    count: int | str


@view
class KustomizeSource:
    name_prefix: str | None
    name_suffix: str | None
    images: tuple[str, ...]
    common_labels: Mapping[str, str]
    common_annotations: Mapping[str, str]
    common_annotations_envsubst: bool
    force_common_labels: bool
    force_common_annotations: bool
    label_without_selector: bool
    label_include_templates: bool
    namespace: str | None
    replicas: tuple[KustomizeReplica, ...]
    patches: tuple[Mapping[str, Any], ...]
    components: tuple[str, ...]
    ignore_missing_components: bool
    version: str | None
    kube_version: str | None
    api_versions: tuple[str, ...]


@view
class DirectorySource:
    recurse: bool
    include: str | None
    exclude: str | None
    jsonnet: Mapping[str, Any]
    disable_extension_filter: bool


@view
class ApplicationSource:
    repo_url: str
    path: str | None
    target_revision: str | None
    chart: str | None
    ref: str | None
    name: str | None
    tag_prefix: str | None
    helm: HelmSource | None
    kustomize: KustomizeSource | None
    directory: DirectorySource | None
    plugin: Mapping[str, Any] | None

    @property
    def revision(self) -> str:
        """The revision to resolve; Argo CD reads an empty `targetRevision` as `HEAD`."""
        return self.target_revision or "HEAD"


def _one_source_type(src: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    kinds = [k for k in ("helm", "kustomize", "directory", "plugin") if src.get(k) is not None]
    if len(kinds) > 1:
        report.error((*path, kinds[1]), f"a source may set only one of {', '.join(kinds)}")


_HELM = s.Schema(
    "ApplicationSourceHelm",
    (
        s.Field("releaseName", s.STR),
        s.Field("valueFiles", s.STRING_LIST),
        s.Field("values", s.STR),
        s.Field("valuesObject", s.AnyValue(mapping=True)),
        s.Field(
            "parameters",
            s.ListOf(
                s.Obj(
                    s.Schema(
                        "HelmParameter",
                        (
                            s.Field("name", s.STR),
                            s.Field("value", s.STR),
                            s.Field("forceString", s.BOOL, default=False),
                        ),
                        HelmParameter,
                    )
                )
            ),
        ),
        s.Field(
            "fileParameters",
            s.ListOf(
                s.Obj(
                    s.Schema(
                        "HelmFileParameter",
                        (s.Field("name", s.STR), s.Field("path", s.STR)),
                        HelmFileParameter,
                    )
                )
            ),
        ),
        s.Field("ignoreMissingValueFiles", s.BOOL, default=False),
        s.Field("skipCrds", s.BOOL, default=False),
        s.Field("skipTests", s.BOOL, default=False),
        s.Field("skipSchemaValidation", s.BOOL, default=False),
        s.Field("passCredentials", s.BOOL, default=False),
        s.Field("version", s.STR),
        s.Field("namespace", s.STR),
        s.Field("kubeVersion", s.STR),
        s.Field("apiVersions", s.STRING_LIST),
    ),
    HelmSource,
)

_KUSTOMIZE_SELECTOR = s.Schema(
    "KustomizeSelector",
    tuple(
        s.Field(name, s.STR)
        for name in (
            "group",
            "version",
            "kind",
            "name",
            "namespace",
            "annotationSelector",
            "labelSelector",
        )
    ),
)
_KUSTOMIZE_PATCH = s.Schema(
    "KustomizePatch",
    (
        s.Field("path", s.STR),
        s.Field("patch", s.STR),
        s.Field("target", s.Obj(_KUSTOMIZE_SELECTOR)),
        s.Field("options", s.AnyValue(mapping=True)),
    ),
)

_KUSTOMIZE = s.Schema(
    "ApplicationSourceKustomize",
    (
        s.Field("namePrefix", s.STR),
        s.Field("nameSuffix", s.STR),
        s.Field("images", s.STRING_LIST),
        s.Field("commonLabels", s.STRING_MAP),
        s.Field("commonAnnotations", s.STRING_MAP),
        s.Field("commonAnnotationsEnvsubst", s.BOOL, default=False),
        s.Field("forceCommonLabels", s.BOOL, default=False),
        s.Field("forceCommonAnnotations", s.BOOL, default=False),
        s.Field("labelWithoutSelector", s.BOOL, default=False),
        s.Field("labelIncludeTemplates", s.BOOL, default=False),
        s.Field("namespace", s.STR),
        s.Field(
            "replicas",
            s.ListOf(
                s.Obj(
                    s.Schema(
                        "KustomizeReplica",
                        (
                            s.Field("name", s.STR, required=True),
                            s.Field("count", s.INT_OR_STRING, required=True),
                        ),
                        KustomizeReplica,
                    )
                )
            ),
        ),
        s.Field("patches", s.ListOf(s.Obj(_KUSTOMIZE_PATCH))),
        s.Field("components", s.STRING_LIST),
        s.Field("ignoreMissingComponents", s.BOOL, default=False),
        s.Field("version", s.STR),
        s.Field("kubeVersion", s.STR),
        s.Field("apiVersions", s.STRING_LIST),
    ),
    KustomizeSource,
)

_JSONNET_VAR = s.Schema(
    "JsonnetVar",
    (
        s.Field("name", s.STR, required=True),
        s.Field("value", s.STR, required=True),
        s.Field("code", s.BOOL),
    ),
)
_JSONNET = s.Schema(
    "ApplicationSourceJsonnet",
    (
        s.Field("extVars", s.ListOf(s.Obj(_JSONNET_VAR))),
        s.Field("tlas", s.ListOf(s.Obj(_JSONNET_VAR))),
        s.Field("libs", s.STRING_LIST),
    ),
)
_DIRECTORY = s.Schema(
    "ApplicationSourceDirectory",
    (
        s.Field("recurse", s.BOOL, default=False),
        s.Field("include", s.STR),
        s.Field("exclude", s.STR),
        s.Field("jsonnet", s.Obj(_JSONNET), default={}),
        s.Field("disableExtensionFilter", s.BOOL, default=False),
    ),
    DirectorySource,
)
_PLUGIN = s.Schema(
    "ApplicationSourcePlugin",
    (
        s.Field("name", s.STR),
        s.Field(
            "env",
            s.ListOf(
                s.Obj(
                    s.Schema(
                        "EnvEntry",
                        (
                            s.Field("name", s.STR, required=True),
                            s.Field("value", s.STR, required=True),
                        ),
                    )
                )
            ),
        ),
        s.Field("parameters", s.ListOf(s.AnyValue(mapping=True))),
    ),
)

SOURCE = s.Schema(
    "ApplicationSource",
    (
        s.Field("repoURL", s.STR, required=True),
        s.Field("path", s.STR),
        s.Field("targetRevision", s.STR),
        s.Field("chart", s.STR),
        s.Field("ref", s.STR),
        s.Field("name", s.STR),
        s.Field("tagPrefix", s.STR),
        s.Field("helm", s.Obj(_HELM)),
        s.Field("kustomize", s.Obj(_KUSTOMIZE)),
        s.Field("directory", s.Obj(_DIRECTORY)),
        s.Field("plugin", s.Obj(_PLUGIN)),
    ),
    ApplicationSource,
    checks=(_one_source_type,),
)


def argo_field_names(tool: str) -> frozenset[str]:
    """The fields Argo CD knows in a source's `helm` or `kustomize` block."""
    return frozenset({"helm": _HELM, "kustomize": _KUSTOMIZE}[tool].by_name)
