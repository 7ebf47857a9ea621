"""The diff customizations of Argo CD's `argocd-cm`: system-wide ignore rules and compare options.

Read as Argo CD reads them (its settings manager), so one function serves every place
Headway meets an argocd-cm (serve, `headway app diff`, validate, check):

* `resource.customizations.ignoreDifferences.<group>_<kind>` (`<kind>` alone for a key
  without a group, `all` for every resource), its value a YAML text with `jsonPointers`,
  `jqPathExpressions` and `managedFieldsManagers`;
* the older `resource.customizations` YAML block, whose `<group>/<kind>` entries (globs
  allowed) may carry an `ignoreDifferences` text; a split key for the same group and kind
  replaces the block's rule, as in Argo CD;
* `resource.compareoptions`: `ignoreAggregatedRoles` (default false),
  `ignoreResourceStatusField` (`all`, the default since Argo CD 3.0; `crd`; `none`, also
  written `off` or `false`) and `ignoreDifferencesOnResourceUpdates`, which only saves
  Argo CD refreshes and changes no comparison.

Matching follows Argo CD exactly. Pointers and jq expressions apply to every object whose
group and kind match the rule's key as globs. Managed-field managers are looked up by the
literal key `<group>/<kind>` or `*/*`: a key without a group (`...ignoreDifferences.Service`)
is stored as `Service`, never equal to the lookup `/Service`, so its managers apply to
nothing in Argo CD, nor here (a warning says to write `_Service`).

A malformed entry (YAML that does not parse, a field of the wrong type, a block entry that
is not a mapping, a pointer without its leading `/`, a jq expression that does not compile,
a key with two `_`, an unknown customization type) is an error naming the key: Argo CD then
compares no application at all (its status reads Unknown), and Headway makes every
comparison a ComparisonError that names the key, so a rule meant to stop a fight is never
silently dropped. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import jq
import yaml

from headway.model import yamlload
from headway.model.application import IgnoreDifferences

__all__ = [
    "ALL_OVERRIDE",
    "COMPARE_OPTIONS_KEY",
    "CUSTOMIZATIONS_KEY",
    "CUSTOMIZATION_TYPES",
    "IGNORE_PREFIX",
    "CompareOptions",
    "DiffCustomizations",
    "SettingProblem",
    "StatusScope",
    "SystemIgnore",
    "diff_customizations",
]

CUSTOMIZATIONS_KEY = "resource.customizations"
IGNORE_PREFIX = "resource.customizations.ignoreDifferences."
COMPARE_OPTIONS_KEY = "resource.compareoptions"
ALL_OVERRIDE = "*/*"
# The customization types Argo CD knows in a split key; any other fails all its settings.
CUSTOMIZATION_TYPES = frozenset({
    "health", "useOpenLibs", "actions", "ignoreDifferences", "ignoreResourceUpdates",
    "knownTypeFields",
})  # fmt: skip
_RULE_FIELDS = {
    "jsonPointers": "json_pointers",
    "jqPathExpressions": "jq_path_expressions",
    "managedFieldsManagers": "managed_fields_managers",
}
_OPTION_FIELDS = frozenset(
    {"ignoreAggregatedRoles", "ignoreResourceStatusField", "ignoreDifferencesOnResourceUpdates"}
)


class StatusScope(StrEnum):
    """Which objects' `status` the comparison leaves out (`ignoreResourceStatusField`)."""

    ALL = "all"
    CRD = "crd"
    NONE = "none"


@dataclass(frozen=True)
class CompareOptions:
    """`resource.compareoptions`, with Argo CD 3's defaults."""

    ignore_aggregated_roles: bool = False
    ignore_status: StatusScope = StatusScope.ALL
    ignore_differences_on_resource_updates: bool = True


@dataclass(frozen=True)
class SystemIgnore:
    """One system-wide rule. `override` is Argo CD's key for it (`apps/Deployment`,
    `Service`, `*/*`, or a block key as written); `entry` holds the group and kind it
    matches by glob and what it ignores; `key` is the argocd-cm data key it came from."""

    key: str
    override: str
    entry: IgnoreDifferences

    @property
    def managers_by_literal_key(self) -> bool:
        """Whether Argo CD's lookup `<group>/<kind>` (or `*/*`) can ever find this rule's
        managed-field managers: only for an override key with a `/`."""
        return "/" in self.override


@dataclass(frozen=True)
class SettingProblem:
    """A problem at one argocd-cm data key; an error stops every comparison."""

    key: str
    message: str
    error: bool = True


@dataclass(frozen=True)
class DiffCustomizations:
    ignores: tuple[SystemIgnore, ...] = ()
    compare: CompareOptions = field(default_factory=CompareOptions)
    problems: tuple[SettingProblem, ...] = ()

    @property
    def errors(self) -> tuple[SettingProblem, ...]:
        return tuple(p for p in self.problems if p.error)


def diff_customizations(data: Mapping[str, Any]) -> DiffCustomizations:
    """The diff customizations of argocd-cm `data` (see the module docstring)."""
    problems: list[SettingProblem] = []
    by_override: dict[str, SystemIgnore] = {}
    for rule in _block_rules(data.get(CUSTOMIZATIONS_KEY), problems):
        by_override[rule.override] = rule
    for raw_key, value in data.items():
        key = str(raw_key)
        if not key.startswith(CUSTOMIZATIONS_KEY + "."):
            continue
        if not isinstance(value, str):
            problems.append(SettingProblem(key, "expected a text value, as every ConfigMap value"))
            continue
        split = _split_key_rule(key, value, problems)
        if split is not None:  # replaces the block's rule for the same key, empty or not
            by_override[split.override] = split
    compare = _compare_options(data.get(COMPARE_OPTIONS_KEY), problems)
    return DiffCustomizations(tuple(by_override.values()), compare, tuple(problems))


def _split_key_rule(key: str, value: Any, problems: list[SettingProblem]) -> SystemIgnore | None:
    """`resource.customizations.<type>.<group_kind>`: a rule for `ignoreDifferences`, None
    for the other types; a key Argo CD cannot read is a problem."""
    parts = key.split(".", 3)
    if len(parts) < 4:
        return None  # Argo CD skips `resource.customizations.<type>` without a group_kind
    kind_of_customization, group_kind = parts[2], parts[3]
    if kind_of_customization not in CUSTOMIZATION_TYPES:
        known = ", ".join(sorted(CUSTOMIZATION_TYPES))
        message = (
            f"{kind_of_customization!r} is not a customization Argo CD knows ({known}); "
            "Argo CD then refuses all its settings and compares no application, and Headway "
            "reports every comparison as an error until it is fixed"
        )
        problems.append(SettingProblem(key, message))
        return None
    override = _override_key(group_kind)
    if override is None:
        message = (
            f"{group_kind!r} is not <group>_<kind> or <kind>: a group with '_' cannot be "
            "written here (use the resource.customizations block)"
        )
        problems.append(SettingProblem(key, message))
        return None
    if kind_of_customization != "ignoreDifferences":
        return None
    return _rule(key, override, value, problems)


def _override_key(group_kind: str) -> str | None:
    """Argo CD's override key for the `<group_kind>` of a split key: `apps_Deployment` ->
    `apps/Deployment`, `Service` -> `Service`, `all` -> `*/*`."""
    if group_kind == "all":
        return ALL_OVERRIDE
    parts = group_kind.split("_")
    if len(parts) == 2:
        return f"{parts[0]}/{parts[1]}"
    if len(parts) == 1 and group_kind:
        return group_kind
    return None


def _block_rules(text: Any, problems: list[SettingProblem]) -> list[SystemIgnore]:
    """The `ignoreDifferences` texts of the `resource.customizations` block's entries."""
    if not isinstance(text, str) or not text.strip():
        return []
    try:
        parsed = yamlload.load_one(text)
    except yaml.YAMLError as err:
        problems.append(SettingProblem(CUSTOMIZATIONS_KEY, f"not valid YAML: {_first_line(err)}"))
        return []
    if not isinstance(parsed, Mapping):
        message = "expected a mapping of <group>/<kind> entries"
        problems.append(SettingProblem(CUSTOMIZATIONS_KEY, message))
        return []
    rules = []
    for override, entry in parsed.items():
        if entry is not None and not isinstance(entry, Mapping):  # Argo CD cannot read it
            message = "expected a mapping (`ignoreDifferences: |`, `health.lua: |`, ...)"
            problems.append(SettingProblem(CUSTOMIZATIONS_KEY, f"{override}: {message}"))
            continue
        value = entry.get("ignoreDifferences") if entry is not None else None
        if value is None:
            continue
        label = f"{override}: ignoreDifferences"
        if not isinstance(value, str):
            message = "expected a YAML text (`ignoreDifferences: |`), as Argo CD reads it"
            problems.append(SettingProblem(CUSTOMIZATIONS_KEY, f"{override}: {message}"))
            continue
        rule = _rule(CUSTOMIZATIONS_KEY, str(override), value, problems, label=label)
        if rule is not None:
            rules.append(rule)
    return rules


def _rule(
    key: str, override: str, value: Any, problems: list[SettingProblem], *, label: str = ""
) -> SystemIgnore | None:
    """The rule a YAML text holds, or None (a problem noted) when it cannot be used;
    `label` says where in the key's value the text is (a block entry)."""
    prefix = f"{label}: " if label else ""

    def problem(message: str, *, error: bool = True) -> None:
        problems.append(SettingProblem(key, prefix + message, error))

    try:
        parsed = yamlload.load_one(str(value)) if value is not None else None
    except yaml.YAMLError as err:
        problem(f"not valid YAML: {_first_line(err)}")
        return None
    if parsed is None:
        return SystemIgnore(key, override, _entry(override, {}))
    if not isinstance(parsed, Mapping):
        problem("expected jsonPointers, jqPathExpressions and/or managedFieldsManagers")
        return None
    fields: dict[str, tuple[str, ...]] = {}
    for name, value_of in parsed.items():
        target = _RULE_FIELDS.get(str(name))
        if target is None:
            problem(f"{name}: not a field of an ignore rule ({', '.join(_RULE_FIELDS)}); "
                    "Argo CD ignores it", error=False)  # fmt: skip
            continue
        strings = _strings(value_of)
        if strings is None:
            problem(f"{name}: expected a list of strings")
            return None
        fields[target] = strings
    entry = _entry(override, fields)
    if not _usable(entry, problem):
        return None
    if entry.managed_fields_managers and "/" not in override:
        problem(
            f"managedFieldsManagers: Argo CD looks them up as `/{override}`, never as "
            f"`{override}`, so they apply to nothing (Headway does the same); write the key "
            f"with an empty group (`{IGNORE_PREFIX}_{override}`)",
            error=False,
        )
    return SystemIgnore(key, override, entry)


def _entry(override: str, fields: Mapping[str, tuple[str, ...]]) -> IgnoreDifferences:
    group, kind = _group_kind(override)
    return IgnoreDifferences(
        group=group,
        kind=kind,
        name=None,
        namespace=None,
        json_pointers=fields.get("json_pointers", ()),
        jq_path_expressions=fields.get("jq_path_expressions", ()),
        managed_fields_managers=fields.get("managed_fields_managers", ()),
    )


def _group_kind(override: str) -> tuple[str, str]:
    """The group and kind globs of an override key, as Argo CD splits it (a key with more
    than one `/` matches nothing: Argo CD logs it and uses an empty group and kind)."""
    parts = override.split("/")
    if len(parts) == 2:
        return parts[0], parts[1]
    if len(parts) == 1:
        return "", parts[0]
    return "", ""


def _usable(entry: IgnoreDifferences, problem: Callable[[str], None]) -> bool:
    """Whether every pointer and jq expression can be used; `problem` notes the first that
    cannot."""
    for pointer in entry.json_pointers:
        if pointer and not pointer.startswith("/"):
            problem(f'jsonPointers: "{pointer}" is not a JSON pointer (it must start with "/")')
            return False
    for expression in entry.jq_path_expressions:
        try:
            jq.compile(f"[path({expression})]")
        except ValueError as err:
            problem(f"jqPathExpressions: {expression!r} does not compile: {_first_line(err)}")
            return False
    return True


def _compare_options(text: Any, problems: list[SettingProblem]) -> CompareOptions:
    if text is None:
        return CompareOptions()
    if not isinstance(text, str):
        message = "expected a YAML text (`resource.compareoptions: |`), as every ConfigMap value"
        problems.append(SettingProblem(COMPARE_OPTIONS_KEY, message))
        return CompareOptions()
    try:
        parsed = yamlload.load_one(str(text))
    except yaml.YAMLError as err:
        problems.append(SettingProblem(COMPARE_OPTIONS_KEY, f"not valid YAML: {_first_line(err)}"))
        return CompareOptions()
    if parsed is None:
        return CompareOptions()
    if not isinstance(parsed, Mapping):
        problems.append(SettingProblem(COMPARE_OPTIONS_KEY, "expected a mapping of options"))
        return CompareOptions()
    for name in parsed:
        if str(name) not in _OPTION_FIELDS:
            message = (
                f"{name}: not a compare option ({', '.join(sorted(_OPTION_FIELDS))}); "
                "Argo CD ignores it"
            )
            problems.append(SettingProblem(COMPARE_OPTIONS_KEY, message, error=False))
    roles = _boolean(parsed, "ignoreAggregatedRoles", False, problems)
    updates = _boolean(parsed, "ignoreDifferencesOnResourceUpdates", True, problems)
    status = _status_scope(parsed.get("ignoreResourceStatusField"), problems)
    return CompareOptions(roles, status, updates)


def _boolean(
    parsed: Mapping[str, Any], name: str, default: bool, problems: list[SettingProblem]
) -> bool:
    value = parsed.get(name, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        problems.append(SettingProblem(COMPARE_OPTIONS_KEY, f"{name}: expected true or false"))
        return default
    return value


def _status_scope(value: Any, problems: list[SettingProblem]) -> StatusScope:
    """Argo CD's reading: empty or `all` -> all; `crd`; `none`, `off` or `false` -> none
    (YAML reads the last two as a boolean false); anything else -> all, with a warning."""
    if value is None or value in ("", "all"):
        return StatusScope.ALL
    if value == "crd":
        return StatusScope.CRD
    if value is False or value in ("none", "off", "false"):
        return StatusScope.NONE
    message = (
        f"ignoreResourceStatusField: {value!r} is not all, crd or none; "
        "Argo CD then ignores the status of every resource, and so does Headway"
    )
    problems.append(SettingProblem(COMPARE_OPTIONS_KEY, message, error=False))
    return StatusScope.ALL


def _strings(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return tuple(value)


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
