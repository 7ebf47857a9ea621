"""Comparing one desired object with its live counterpart. Purely computational.

Pipeline: strip server-written fields from both sides, default the live side, fold Secret
`stringData`, drop ignored paths (ignoreDifferences) from both, then project the live object
onto the shape of the desired one - only fields present in desired are compared; lists that
Kubernetes merges by key (containers, env, ports, volumes, ...) are matched by that key, and
extra live items are left alone, as `kubectl apply` would leave them; scalars compare
canonically (`1` vs `"1"`, quantities `1000m` vs `1`). The resource is modified when the
projection differs from the desired object.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from headway.diff.defaults import with_defaults
from headway.diff.ignore import CompiledRule
from headway.diff.normalize import fold_string_data, strip_server_fields
from headway.diff.paths import ABSENT, delete_paths
from headway.diff.render import yaml_diff_lines
from headway.model.argocd_diff import CompareOptions, StatusScope
from headway.model.obj import Obj
from headway.model.quantities import QuantityError, parse_quantity

__all__ = [
    "ResourceDiff",
    "diff_resource",
    "normalize_pair",
    "project_and_match",
    "projects_unchanged",
    "same_values",
    "scalars_equal",
]


_MERGE_KEYS = {
    "containers": ("name",),
    "initContainers": ("name",),
    "ephemeralContainers": ("name",),
    "env": ("name",),
    "volumes": ("name",),
    "imagePullSecrets": ("name",),
    "volumeMounts": ("mountPath",),
    "volumeDevices": ("devicePath",),
    "ports": ("containerPort", "port"),
    "hostAliases": ("ip",),
    "conditions": ("type",),
}
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# Exactly these types (not subclasses) are the scalars `scalars_equal` compares.
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
_EMPTY: Mapping[str, Any] = {}
_QUANTITY_MAPS = frozenset(
    {
        "requests",
        "limits",
        "hard",
        "capacity",
        "allocatable",
        "default",
        "defaultRequest",
        "max",
        "min",
        "maxLimitRequestRatio",
        "overhead",
    }
)


@dataclass(frozen=True)
class ResourceDiff:
    """`normalized_live` is the live object as compared (projected onto desired's shape),
    None when the object does not exist; `normalized_desired` is None for an object that
    is live but no longer desired."""

    modified: bool
    normalized_live: dict[str, Any] | None
    normalized_desired: dict[str, Any] | None

    @cached_property
    def diff_lines(self) -> tuple[str, ...]:
        """A unified diff of both sides' YAML (Secret values masked), written on first use:
        every refresh compares every resource, but only `headway app diff` and the
        dashboard show a diff (dumping YAML made a changed app cost ~3 unchanged ones)."""
        if not self.modified:
            return ()
        return yaml_diff_lines(self.normalized_live, self.normalized_desired)


_DEFAULT_OPTIONS = CompareOptions()
_CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
_RBAC_ROLES = frozenset(
    {("rbac.authorization.k8s.io", "Role"), ("rbac.authorization.k8s.io", "ClusterRole")}
)


def normalize_pair(
    desired: Obj | None,
    live: Obj | None,
    rules: Sequence[CompiledRule] = (),
    options: CompareOptions = _DEFAULT_OPTIONS,
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Both sides normalized and with ignored paths removed (live not yet projected);
    `options` are argocd-cm's `resource.compareoptions`."""
    subject = desired if desired is not None else live
    keep_status = subject is not None and _compares_status(subject, options.ignore_status)
    norm_desired = (
        fold_string_data(strip_server_fields(desired, keep_status=keep_status))
        if desired is not None
        else None
    )
    norm_live = (
        fold_string_data(with_defaults(strip_server_fields(live, keep_status=keep_status)))
        if live is not None
        else None
    )
    if options.ignore_aggregated_roles:
        norm_desired = _without_aggregated_rules(norm_desired)
        norm_live = _without_aggregated_rules(norm_live)
    for rule in rules:
        if subject is None or not rule.matches(subject):
            continue
        if norm_desired is not None:
            norm_desired = delete_paths(norm_desired, rule.paths(norm_desired, owners_from=live))
        if norm_live is not None:
            norm_live = delete_paths(norm_live, rule.paths(norm_live, owners_from=live))
    return norm_desired, norm_live


def _compares_status(obj: Obj, scope: StatusScope) -> bool:
    """Whether `status` stays in the comparison (`ignoreResourceStatusField`): never under
    `all` (Argo CD 3's default), only for kinds other than CRDs under `crd`, always under
    `none`."""
    if scope is StatusScope.ALL:
        return False
    if scope is StatusScope.NONE:
        return True
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    return (group, obj.get("kind")) != _CRD


def _without_aggregated_rules(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    """`ignoreAggregatedRoles`: a Role or ClusterRole with an `aggregationRule` map compares
    with `rules: null`, since the aggregation controller writes its rules (Argo CD's
    normalization, applied to each side on its own)."""
    if obj is None or not isinstance(obj.get("aggregationRule"), Mapping):
        return obj
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    if (group, obj.get("kind")) not in _RBAC_ROLES:
        return obj
    return {**obj, "rules": None}


def diff_resource(
    desired: Obj | None,
    live: Obj | None,
    rules: Sequence[CompiledRule] = (),
    options: CompareOptions = _DEFAULT_OPTIONS,
    *,
    expect_change: bool = False,
) -> ResourceDiff:
    """The difference between `desired` and `live`. The quick walk for the common answer
    (in sync: `projects_unchanged`) is skipped with `expect_change`, which a caller passes
    when the desired object changed since an earlier comparison with this very live object
    (a commit the cluster has not seen yet, where that walk would go most of the way to the
    changed field for nothing); the answer is the same either way."""
    norm_desired, norm_live = normalize_pair(desired, live, rules, options)
    if norm_desired is None or norm_live is None:
        shown = norm_live if norm_desired is None else None
        return ResourceDiff(True, shown, norm_desired)
    applied = last_applied(live)
    if not expect_change and projects_unchanged(norm_desired, norm_live, "", applied=applied):
        # The projection would be `norm_desired` itself, value for value: skip building it.
        return ResourceDiff(False, norm_desired, norm_desired)
    projected, same = project_and_match(norm_desired, norm_live, "", applied=applied)
    return ResourceDiff(not same, projected, norm_desired)


def same_values(a: Any, b: Any) -> bool:
    """`a == b` as YAML means it: a boolean is never equal to a number (Python's `True == 1`
    would read a live `1` as in sync with a desired `true`), and `.nan` is the same value
    as `.nan` (as `scalars_equal` and the in-sync walk `projects_unchanged` read it; by
    Python's `==` alone a resource holding one compared modified or in sync depending on
    which walk answered)."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if _is_mapping(a) and _is_mapping(b):
        return a.keys() == b.keys() and all(same_values(v, b[k]) for k, v in a.items())
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b, strict=True))
    if a == b:
        return True
    return type(a) is float and type(b) is float and math.isnan(a) and math.isnan(b)


def last_applied(live: Obj | None) -> Any:
    """The configuration `kubectl apply` recorded on the live object, or ABSENT."""
    notes = ((live or {}).get("metadata") or {}).get("annotations") or {}
    raw = notes.get(_LAST_APPLIED)
    if not isinstance(raw, str):
        return ABSENT
    try:
        return json.loads(raw)
    except ValueError:
        return ABSENT


def project(desired: Any, live: Any, field: str, parent: str = "", applied: Any = ABSENT) -> Any:
    """`live` reduced to the fields `desired` has (see module docstring); `field` is the
    key holding these values and `parent` the key of the map around them. Fields the last
    applied configuration had, that desired dropped and live still has, are kept too: apply
    would remove them, so they are a difference. Types are told apart by `type()` before
    the ABC `isinstance` (as in `projects_unchanged`): this runs for every changed resource."""
    if type(desired) in _SCALAR_TYPES:  # never a Mapping or a list
        return desired if scalars_equal(desired, live, quantity=parent in _QUANTITY_MAPS) else live
    if _is_mapping(desired) and _is_mapping(live):
        before = _EMPTY if applied is ABSENT or not _is_mapping(applied) else applied
        out = {
            k: project(v, live[k], k, field, before.get(k, ABSENT))
            for k, v in desired.items()
            if k in live
        }
        out.update({k: live[k] for k in before if k not in desired and k in live})
        return out
    if _is_list(desired) and _is_list(live):
        keys = _merge_key(field, desired, live)
        if keys is not None:
            return _project_keyed(desired, live, keys, applied if isinstance(applied, list) else [])
        if len(desired) == len(live):
            return [project(d, lv, field) for d, lv in zip(desired, live, strict=True)]
        return live
    if scalars_equal(desired, live, quantity=parent in _QUANTITY_MAPS):
        return desired
    return live


def project_and_match(
    desired: Any, live: Any, field: str, parent: str = "", applied: Any = ABSENT
) -> tuple[Any, bool]:
    """`project(desired, live, field, parent, applied)` and whether it `same_values` desired,
    in one walk: a changed resource used to be walked again to compare its projection.
    Plain dicts, lists and scalars are walked here; any other type, and a keyed list that
    lost or gained items, take `project` and `same_values` themselves, so the answer is
    theirs by construction."""
    kind = type(desired)
    if kind in _SCALAR_TYPES:
        if type(live) is kind and desired == live:
            return desired, True
        if scalars_equal(desired, live, quantity=parent in _QUANTITY_MAPS):
            return desired, True  # the projection is desired itself
        return live, same_values(live, desired)
    if kind is dict and type(live) is dict:
        return _match_map(desired, live, field, applied)
    if kind is list and type(live) is list:
        key = _merge_key(field, desired, live)
        if key is not None:
            return _match_keyed(desired, live, key, applied if isinstance(applied, list) else [])
        if len(desired) == len(live):
            pairs = [project_and_match(d, lv, field) for d, lv in zip(desired, live, strict=True)]
            return [p for p, _ in pairs], all(same for _, same in pairs)
    projected = project(desired, live, field, parent, applied)
    return projected, same_values(projected, desired)


def _match_map(
    desired: dict[str, Any], live: dict[str, Any], field: str, applied: Any
) -> tuple[dict[str, Any], bool]:
    """`project_and_match` for two maps: the projection keeps desired's key order, then the
    fields apply would remove; it matches when every child does and no key was lost or
    added (what `same_values` asks of two maps)."""
    before = _EMPTY if applied is ABSENT or not _is_mapping(applied) else applied
    out: dict[str, Any] = {}
    same = True
    for key, value in desired.items():
        theirs = live.get(key, ABSENT)
        mine = type(value)
        if mine is type(theirs) and mine in _SCALAR_TYPES and value == theirs:
            out[key] = value  # equal scalars, settled without a call (as in the walk below)
        elif theirs is not ABSENT:
            out[key], kept = project_and_match(value, theirs, key, field, before.get(key, ABSENT))
            same = same and kept
        else:
            same = False
    for key in before:
        if key not in desired and key in live:
            out[key] = live[key]
            same = False
    return out, same


def _match_keyed(
    desired: list[Any], live: list[Any], key: str, applied: list[Any]
) -> tuple[list[Any], bool]:
    """`project_and_match` for a list merged by `key` (as `_project_keyed` projects it).
    When every desired item found its live item and apply would remove none, the lists
    pair item for item; otherwise `same_values` compares what was built."""
    by_key = {str(item[key]): item for item in live}
    before = {str(i[key]): i for i in applied if isinstance(i, Mapping) and key in i}
    out: list[Any] = []
    same = complete = True
    for item in desired:
        match = by_key.get(str(item[key]), ABSENT)
        if match is ABSENT:
            complete = False
            continue
        projected, kept = project_and_match(
            item, match, "", applied=before.get(str(item[key]), ABSENT)
        )
        out.append(projected)
        same = same and kept
    wanted = {str(item[key]) for item in desired}
    extra = [by_key[k] for k in before if k not in wanted and k in by_key]
    if complete and not extra:
        return out, same
    out.extend(extra)
    return out, same_values(out, desired)


def projects_unchanged(
    desired: Any, live: Any, field: str, parent: str = "", applied: Any = ABSENT
) -> bool:
    """Whether `project(desired, live, field, parent, applied)` is `desired` again: every
    field desired has is in live with an equal value (`scalars_equal`), and nothing apply
    would remove is there. Walks both sides without building the projection; the common
    answer (a resource in sync) is yes. A no is only a maybe: the caller projects.

    Types are told apart by `type()` first: an ABC `isinstance` per value (`Mapping`) was
    most of the walk's cost on a fleet refresh."""
    kind = type(desired)
    if kind in _SCALAR_TYPES:
        return scalars_equal(desired, live, quantity=parent in _QUANTITY_MAPS)
    if (kind is dict or isinstance(desired, Mapping)) and _is_mapping(live):
        before = _EMPTY if applied is ABSENT or not _is_mapping(applied) else applied
        for key, value in desired.items():
            theirs = live.get(key, ABSENT)
            mine = type(value)
            if mine is type(theirs) and mine in _SCALAR_TYPES and value == theirs:
                continue  # most values: equal scalars, settled without a call
            if theirs is ABSENT:
                return False
            if not projects_unchanged(value, theirs, key, field, before.get(key, ABSENT)):
                return False
        return not before or not any(k not in desired and k in live for k in before)
    if kind is list and type(live) is list:
        keys = _merge_key(field, desired, live)
        if keys is not None:
            earlier = applied if isinstance(applied, list) else []
            return _keyed_unchanged(desired, live, keys, earlier)
        return len(desired) == len(live) and all(
            projects_unchanged(d, lv, field) for d, lv in zip(desired, live, strict=True)
        )
    return scalars_equal(desired, live, quantity=parent in _QUANTITY_MAPS)


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _is_list(value: Any) -> bool:
    return type(value) is list or isinstance(value, list)


def _keyed_unchanged(desired: list[Any], live: list[Any], key: str, applied: list[Any]) -> bool:
    """`projects_unchanged` for a list merged by `key` (as `_project_keyed` projects it)."""
    by_key = {str(item[key]): item for item in live}
    before = {str(i[key]): i for i in applied if isinstance(i, Mapping) and key in i}
    for item in desired:
        match = by_key.get(str(item[key]), ABSENT)
        if match is ABSENT:
            return False
        if not projects_unchanged(item, match, "", applied=before.get(str(item[key]), ABSENT)):
            return False
    wanted = {str(item[key]) for item in desired}
    return not any(k not in wanted and k in by_key for k in before)


def _merge_key(field: str, desired: list[Any], live: list[Any]) -> str | None:
    for key in _MERGE_KEYS.get(field, ()):
        if all(_is_mapping(i) and key in i for i in [*desired, *live]):
            return key
    return None


def _project_keyed(desired: list[Any], live: list[Any], key: str, applied: list[Any]) -> list[Any]:
    by_key = {str(item[key]): item for item in live}
    before = {str(i[key]): i for i in applied if isinstance(i, Mapping) and key in i}
    out = []
    for item in desired:
        match = by_key.get(str(item[key]), ABSENT)
        if match is not ABSENT:
            out.append(project(item, match, "", applied=before.get(str(item[key]), ABSENT)))
    wanted = {str(item[key]) for item in desired}
    out.extend(by_key[k] for k in before if k not in wanted and k in by_key)
    return out


def scalars_equal(desired: Any, live: Any, *, quantity: bool = False) -> bool:
    """Equal values, an int and its decimal string, or (in resource maps) equal quantities.
    Booleans only ever equal booleans."""
    if type(desired) is type(live) and type(desired) in _SCALAR_TYPES and desired == live:
        return True  # the common case, answered before the slower checks below
    if isinstance(desired, bool) or isinstance(live, bool):
        return type(desired) is type(live) and desired == live
    if not (_is_scalar(desired) and _is_scalar(live)):
        return False
    if desired == live or str(desired) == str(live):
        return True
    if quantity:
        try:
            return parse_quantity(desired) == parse_quantity(live)
        except QuantityError:
            return False
    return False


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, int | float | str)
