"""Argo CD `AppProject`: table, typed view and checks.

`sourceRepos` entries are globs; a leading `!` denies (`SourceRepo.negated`). An *absent*
`clusterResourceWhitelist` denies every cluster-scoped kind, and so does an explicit `[]`;
`cluster_resource_whitelist_set` records whether it was written, so a check can tell a
deliberate `[]` from a forgotten field. Sync windows have kind `allow` or `deny`, a cron
`schedule` and a Go-duration `duration`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from headway.model import cron_syntax, k8s
from headway.model import schema as s
from headway.model.application import Destination
from headway.model.diagnostics import Diagnostic
from headway.model.views import view
from headway.model.yamlload import Document

__all__ = ["APPPROJECT_SPEC", "AppProject", "AppProjectSpec", "SourceRepo", "parse_appproject"]


@view
class SourceRepo:
    pattern: str
    negated: bool


@view
class GroupKind:
    group: str
    kind: str
    name: str | None = None


@view
class JWTToken:
    iat: int
    exp: int | None
    id: str | None


@view
class ProjectRole:
    name: str
    description: str | None
    policies: tuple[str, ...]
    groups: tuple[str, ...]
    jwt_tokens: tuple[JWTToken, ...]


@view
class SyncWindow:
    kind: str  # "allow" or "deny"
    schedule: str
    duration: float  # seconds
    applications: tuple[str, ...]
    namespaces: tuple[str, ...]
    clusters: tuple[str, ...]
    manual_sync: bool
    time_zone: str
    and_operator: bool
    description: str | None
    sync_overrun: bool


@view
class OrphanedResources:
    warn: bool | None
    ignore: tuple[Mapping[str, Any], ...]


@view
class AppProjectSpec:
    description: str | None
    source_repos: tuple[SourceRepo, ...]
    source_namespaces: tuple[str, ...]
    destinations: tuple[Destination, ...]
    destination_service_accounts: tuple[Mapping[str, Any], ...]
    cluster_resource_whitelist: tuple[GroupKind, ...]
    cluster_resource_whitelist_set: bool
    cluster_resource_blacklist: tuple[GroupKind, ...]
    namespace_resource_whitelist: tuple[GroupKind, ...]
    namespace_resource_whitelist_set: bool
    namespace_resource_blacklist: tuple[GroupKind, ...]
    roles: tuple[ProjectRole, ...]
    sync_windows: tuple[SyncWindow, ...]
    orphaned_resources: OrphanedResources | None
    signature_keys: tuple[str, ...]
    permit_only_project_scoped_clusters: bool


@view
class AppProject:
    api_version: str
    metadata: k8s.ObjectMeta
    spec: AppProjectSpec
    kind: str = "AppProject"

    @property
    def name(self) -> str:
        return self.metadata.name or ""


class _SourceRepos(s.ListOf):
    def convert(self, value: Any) -> Any:
        return tuple(SourceRepo(p.removeprefix("!"), p.startswith("!")) for p in value)


class _SignatureKeys(s.ListOf):
    def convert(self, value: Any) -> Any:
        return tuple(entry["keyID"] for entry in value)


def _schedule(window: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    schedule = window.get("schedule")
    if not isinstance(schedule, str):
        return
    valid = cron_syntax.known_verdict(schedule)
    if valid is None:
        from croniter import croniter  # only an unusual schedule needs it (~15 ms to import)

        valid = croniter.is_valid(schedule)
    if not valid:
        report.error((*path, "schedule"), f'"{schedule}" is not a cron schedule')


def _time_zone(window: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    import zoneinfo

    zone = window.get("timeZone")
    if not isinstance(zone, str) or zone in ("", "UTC"):
        return
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        report.error((*path, "timeZone"), f'"{zone}" is not a known time zone')


def _window_scope(window: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    if not any(window.get(k) for k in ("applications", "namespaces", "clusters")):
        report.error(path, "a sync window needs applications, namespaces or clusters")


def _destination_patterns(dest: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    for name in ("server", "name", "namespace"):
        if dest.get(name) == "!*":
            report.error((*path, name), '"!*" would deny everything; it is not allowed')


def _no_duplicates(field: str, key: Callable[[Any], Any]) -> s.Check:
    """A spec check: entries of `field` must be unique by `key` (as Argo CD requires)."""

    def check(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
        entries = spec.get(field)
        seen: set[Any] = set()
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            identity = key(entry)
            if identity is None:
                continue
            if identity in seen:
                report.error((*path, field, index), f"duplicate entry {identity}")
            seen.add(identity)

    return check


def _destination_key(dest: Any) -> str | None:
    if not isinstance(dest, Mapping):
        return None
    server, name, namespace = (dest.get(k) or "" for k in ("server", "name", "namespace"))
    target = server or name
    return f'"{target}/{namespace}"' if isinstance(target, str) else None


def _text_key(value: Any) -> str | None:
    return f'"{value}"' if isinstance(value, str) else None


def _role_key(role: Any) -> str | None:
    return _text_key(role.get("name")) if isinstance(role, Mapping) else None


def _source_repo_patterns(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    repos = spec.get("sourceRepos")
    for index, repo in enumerate(repos if isinstance(repos, list) else []):
        if repo == "!*":
            report.error((*path, "sourceRepos", index), '"!*" would deny every repository')


_UNENFORCED = "not supported by Headway yet"


def _unenforced_restrictions(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    """Restrictions Argo CD enforces and Headway cannot: accepting them would let the
    project sync what it forbids (unsigned commits, clusters not scoped to it)."""
    for field in ("signatureKeys", "sourceIntegrity"):
        if spec.get(field):
            report.error(
                (*path, field),
                f"verifying commit signatures is {_UNENFORCED}: with this field ignored the "
                "project would sync unsigned commits; remove it only if that is acceptable",
            )
    if spec.get("permitOnlyProjectScopedClusters") is True:
        report.error(
            (*path, "permitOnlyProjectScopedClusters"),
            f"{_UNENFORCED}: with it ignored, every cluster matching `destinations` would be "
            "allowed; remove it and list only the project's clusters in `destinations`",
        )


def _group_kind_schema(name: str, *, with_name: bool) -> s.Schema:
    fields = [s.Field("group", s.STR, required=True), s.Field("kind", s.STR, required=True)]
    if with_name:
        fields.append(s.Field("name", s.STR))
    return s.Schema(name, tuple(fields), GroupKind)


_CLUSTER_ITEM = s.ListOf(
    s.Obj(_group_kind_schema("ClusterResourceRestrictionItem", with_name=True))
)
_GROUP_KINDS = s.ListOf(s.Obj(_group_kind_schema("GroupKind", with_name=False)))

_ROLE = s.Schema(
    "ProjectRole",
    (
        s.Field("name", s.STR, required=True),
        s.Field("description", s.STR),
        s.Field("policies", s.STRING_LIST),
        s.Field("groups", s.STRING_LIST),
        s.Field(
            "jwtTokens",
            s.ListOf(
                s.Obj(
                    s.Schema(
                        "JWTToken",
                        (
                            s.Field("iat", s.INT, required=True),
                            s.Field("exp", s.INT),
                            s.Field("id", s.STR),
                        ),
                        JWTToken,
                    )
                )
            ),
        ),
    ),
    ProjectRole,
)
_SYNC_WINDOW = s.Schema(
    "SyncWindow",
    (
        s.Field("kind", s.Enum(("allow", "deny")), required=True),
        s.Field("schedule", s.STR, required=True),
        s.Field("duration", s.Duration(), required=True),
        s.Field("applications", s.STRING_LIST),
        s.Field("namespaces", s.STRING_LIST),
        s.Field("clusters", s.STRING_LIST),
        s.Field("manualSync", s.BOOL, default=False),
        s.Field("timeZone", s.STR, default="UTC"),
        s.Field("andOperator", s.BOOL, default=False),
        s.Field("description", s.STR),
        s.Field("syncOverrun", s.BOOL, default=False),
    ),
    SyncWindow,
    checks=(_schedule, _time_zone, _window_scope),
)
_PROJECT_DESTINATION = s.Schema(
    "ApplicationDestination",
    (s.Field("server", s.STR), s.Field("name", s.STR), s.Field("namespace", s.STR)),
    Destination,
    checks=(_destination_patterns,),
)
_ORPHANED = s.Schema(
    "OrphanedResourcesMonitorSettings",
    (
        s.Field("warn", s.BOOL),
        s.Field(
            "ignore",
            s.ListOf(
                s.Obj(
                    s.Schema(
                        "OrphanedResourceKey",
                        (s.Field("group", s.STR), s.Field("kind", s.STR), s.Field("name", s.STR)),
                    )
                )
            ),
        ),
    ),
    OrphanedResources,
)

APPPROJECT_SPEC = s.Schema(
    "AppProjectSpec",
    (
        s.Field("description", s.STR),
        s.Field("sourceRepos", _SourceRepos(s.STR)),
        s.Field("sourceNamespaces", s.STRING_LIST),
        s.Field("destinations", s.ListOf(s.Obj(_PROJECT_DESTINATION))),
        s.Field("destinationServiceAccounts", s.ListOf(s.AnyValue(mapping=True))),
        s.Field("clusterResourceWhitelist", _CLUSTER_ITEM),
        s.Field("clusterResourceBlacklist", _CLUSTER_ITEM),
        s.Field("namespaceResourceWhitelist", _GROUP_KINDS),
        s.Field("namespaceResourceBlacklist", _GROUP_KINDS),
        s.Field("roles", s.ListOf(s.Obj(_ROLE))),
        s.Field("syncWindows", s.ListOf(s.Obj(_SYNC_WINDOW))),
        s.Field("orphanedResources", s.Obj(_ORPHANED)),
        s.Field(
            "signatureKeys",
            _SignatureKeys(
                s.Obj(s.Schema("SignatureKey", (s.Field("keyID", s.STR, required=True),)))
            ),
        ),
        s.Field("permitOnlyProjectScopedClusters", s.BOOL, default=False),
        s.Field("sourceIntegrity", s.AnyValue(mapping=True)),
    ),
    checks=(
        _source_repo_patterns,
        _unenforced_restrictions,
        _no_duplicates("sourceRepos", _text_key),
        _no_duplicates("sourceNamespaces", _text_key),
        _no_duplicates("destinations", _destination_key),
        _no_duplicates("roles", _role_key),
    ),
)


def _build_spec(raw: Mapping[str, Any]) -> AppProjectSpec:
    fields = s.build_view(APPPROJECT_SPEC, raw)  # a plain dict: the table has no view
    values: dict[str, Any] = {}
    for spec in APPPROJECT_SPEC.fields:
        item = fields.get(spec.name)
        values[spec.attribute] = spec.shape.absent() if item is None else spec.shape.convert(item)
    values.pop("source_integrity")
    values["cluster_resource_whitelist_set"] = raw.get("clusterResourceWhitelist") is not None
    values["namespace_resource_whitelist_set"] = raw.get("namespaceResourceWhitelist") is not None
    return AppProjectSpec(**values)


def parse_appproject(document: Document) -> tuple[AppProject | None, list[Diagnostic]]:
    parts, diagnostics = k8s.parse_typed(document, APPPROJECT_SPEC)
    if parts is None:
        return None, diagnostics
    spec = _build_spec(document.obj["spec"])
    return AppProject(parts.api_version, parts.metadata, spec), diagnostics
