"""Argo CD `Application`: field table, typed view and the checks Argo CD itself applies.

Defaults follow argo-cd `pkg/apis/application/v1alpha1` (retry backoff 5s x2 up to 3m,
revisionHistoryLimit 10, every automated flag false). Duration fields of the retry backoff
accept plain seconds, as Argo CD does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.model import k8s, syncoptions
from headway.model import schema as s
from headway.model.application_sources import SOURCE, ApplicationSource
from headway.model.diagnostics import Diagnostic
from headway.model.views import view
from headway.model.yamlload import Document

__all__ = [
    "APPLICATION_SPEC",
    "Application",
    "ApplicationSource",
    "ApplicationSpec",
    "parse_application",
]


@view
class Destination:
    server: str | None
    name: str | None
    namespace: str | None


@view
class Automated:
    prune: bool
    self_heal: bool
    allow_empty: bool
    enabled: bool


@view
class Backoff:
    duration: float  # seconds
    factor: int
    max_duration: float  # seconds


@view
class Retry:
    limit: int  # 0: no retries; negative: unlimited
    refresh: bool
    backoff: Backoff


@view
class SyncPolicy:
    automated: Automated | None
    sync_options: tuple[str, ...]
    retry: Retry | None
    managed_namespace_metadata: Mapping[str, Any] | None

    @property
    def options(self) -> dict[str, str]:
        """`syncOptions` as a dict (`{"CreateNamespace": "true"}`); validated already."""
        return syncoptions.parse_sync_options(self.sync_options)


@view
class IgnoreDifferences:
    group: str  # "" is the core group, not "any group"
    kind: str
    name: str | None
    namespace: str | None
    json_pointers: tuple[str, ...]
    jq_path_expressions: tuple[str, ...]
    managed_fields_managers: tuple[str, ...]


@view
class Info:
    name: str
    value: str


@view
class ApplicationSpec:
    project: str
    destination: Destination
    source: ApplicationSource | None
    sources: tuple[ApplicationSource, ...]
    source_hydrator: Mapping[str, Any] | None
    sync_policy: SyncPolicy | None
    ignore_differences: tuple[IgnoreDifferences, ...]
    info: tuple[Info, ...]
    revision_history_limit: int

    @property
    def effective_sources(self) -> tuple[ApplicationSource, ...]:
        """`sources` when given (Argo CD then ignores `source`), else `(source,)`."""
        if self.sources:
            return self.sources
        return (self.source,) if self.source is not None else ()


@view
class Application:
    api_version: str
    metadata: k8s.ObjectMeta
    spec: ApplicationSpec
    kind: str = "Application"

    @property
    def name(self) -> str:
        return self.metadata.name or ""


# ---- checks -------------------------------------------------------------------------------


def _destination_target(dest: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    if dest.get("server") is None and dest.get("name") is None:
        report.error((*path, "server"), "a destination needs server or name")
    elif dest.get("server") is not None and dest.get("name") is not None:
        report.error((*path, "name"), "a destination may set server or name, not both")


def _sync_options(policy: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    options = policy.get("syncOptions")
    if not isinstance(options, list):
        return
    for index, option in enumerate(options):
        if isinstance(option, str):
            try:
                syncoptions.parse_sync_option(option)
            except syncoptions.SyncOptionError as err:
                report.error((*path, "syncOptions", index), str(err))


def _ignore_entry(entry: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    pointers = entry.get("jsonPointers")
    if isinstance(pointers, list):
        for index, pointer in enumerate(pointers):
            if isinstance(pointer, str) and not pointer.startswith("/"):
                report.error((*path, "jsonPointers", index), f'"{pointer}" must start with "/"')
    selectors = ("jsonPointers", "jqPathExpressions", "managedFieldsManagers")
    if not any(entry.get(k) for k in selectors):
        report.warning(path, f"ignores nothing: give one of {', '.join(selectors)}")


def _sources_present(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    if all(spec.get(k) is None for k in ("source", "sources", "sourceHydrator")):
        report.error((*path, "source"), "an Application needs source or sources")
    elif spec.get("source") is not None and spec.get("sources") is not None:
        report.warning((*path, "source"), "ignored because sources is set")
    _value_file_refs(spec, path, report)


def _value_file_refs(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    """`$name/...` in a multi-source valueFiles list must name a source's `ref`."""
    sources = spec.get("sources")
    if not isinstance(sources, list):
        return
    refs = {src.get("ref") for src in sources if isinstance(src, Mapping)}
    refs = {ref for ref in refs if isinstance(ref, str)}
    for index, src in enumerate(sources):
        helm = src.get("helm") if isinstance(src, Mapping) else None
        files = helm.get("valueFiles") if isinstance(helm, Mapping) else None
        for position, entry in enumerate(files if isinstance(files, list) else []):
            if isinstance(entry, str) and entry.startswith("$"):
                ref = entry[1:].split("/", 1)[0]
                if ref not in refs:
                    where = (*path, "sources", index, "helm", "valueFiles", position)
                    known = ", ".join(sorted(r for r in refs if isinstance(r, str))) or "none"
                    report.error(where, f'"${ref}" is not the ref of any source (refs: {known})')


# ---- tables -------------------------------------------------------------------------------

DESTINATION = s.Schema(
    "ApplicationDestination",
    (s.Field("server", s.STR), s.Field("name", s.STR), s.Field("namespace", s.STR)),
    Destination,
    checks=(_destination_target,),
)

_BACKOFF = s.Schema(
    "Backoff",
    (
        s.Field("duration", s.Duration(bare_seconds=True), default="5s"),
        s.Field("factor", s.Scalar("integer", minimum=1), default=2),
        s.Field("maxDuration", s.Duration(bare_seconds=True), default="3m"),
    ),
    Backoff,
)
_RETRY = s.Schema(
    "RetryStrategy",
    (
        s.Field("limit", s.INT, default=0),
        s.Field("refresh", s.BOOL, default=False),
        s.Field("backoff", s.Obj(_BACKOFF), default={}),
    ),
    Retry,
)
_AUTOMATED = s.Schema(
    "SyncPolicyAutomated",
    (
        s.Field("prune", s.BOOL, default=False),
        s.Field("selfHeal", s.BOOL, default=False),
        s.Field("allowEmpty", s.BOOL, default=False),
        s.Field("enabled", s.BOOL, default=True),
    ),
    Automated,
)
_SYNC_POLICY = s.Schema(
    "SyncPolicy",
    (
        s.Field("automated", s.Obj(_AUTOMATED)),
        s.Field("syncOptions", s.STRING_LIST),
        s.Field("retry", s.Obj(_RETRY)),
        s.Field(
            "managedNamespaceMetadata",
            s.Obj(
                s.Schema(
                    "ManagedNamespaceMetadata",
                    (s.Field("labels", s.STRING_MAP), s.Field("annotations", s.STRING_MAP)),
                )
            ),
        ),
    ),
    SyncPolicy,
    checks=(_sync_options,),
)
_IGNORE_DIFFERENCES = s.Schema(
    "ResourceIgnoreDifferences",
    (
        s.Field("group", s.STR, default=""),
        s.Field("kind", s.STR, required=True),
        s.Field("name", s.STR),
        s.Field("namespace", s.STR),
        s.Field("jsonPointers", s.STRING_LIST),
        s.Field("jqPathExpressions", s.STRING_LIST),
        s.Field("managedFieldsManagers", s.STRING_LIST),
    ),
    IgnoreDifferences,
    checks=(_ignore_entry,),
)

APPLICATION_SPEC = s.Schema(
    "ApplicationSpec",
    (
        s.Field("project", s.STR, required=True),
        s.Field("destination", s.Obj(DESTINATION), required=True),
        s.Field("source", s.Obj(SOURCE)),
        s.Field("sources", s.ListOf(s.Obj(SOURCE))),
        s.Field("sourceHydrator", s.AnyValue(mapping=True)),
        s.Field("syncPolicy", s.Obj(_SYNC_POLICY)),
        s.Field("ignoreDifferences", s.ListOf(s.Obj(_IGNORE_DIFFERENCES))),
        s.Field(
            "info",
            s.ListOf(
                s.Obj(
                    s.Schema(
                        "Info",
                        (
                            s.Field("name", s.STR, required=True),
                            s.Field("value", s.STR, required=True),
                        ),
                        Info,
                    )
                )
            ),
        ),
        s.Field("revisionHistoryLimit", s.INT, default=10),
    ),
    ApplicationSpec,
    checks=(_sources_present,),
)


def parse_application(document: Document) -> tuple[Application | None, list[Diagnostic]]:
    parts, diagnostics = k8s.parse_typed(document, APPLICATION_SPEC)
    if parts is None:
        return None, diagnostics
    return Application(parts.api_version, parts.metadata, parts.spec), diagnostics
