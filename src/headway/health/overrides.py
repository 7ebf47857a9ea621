"""Where Lua health overrides come from: argocd-cm keys and `<group>/<Kind>/health.lua` trees.

Both forms are Argo CD's. `resource.customizations.health.<group>_<kind>` names the group
and kind in one key (core kinds have no `<group>_` prefix: `...health.PersistentVolumeClaim`);
a directory holds `<group>/<Kind>/health.lua` (core kinds: `<Kind>/health.lua`). The
parsing functions are pure; `read_script_tree` is the one helper that touches the disk.

Lua's string, math and coroutine libraries are opt-in per kind, as in Argo CD: argocd-cm's
`resource.customizations.useOpenLibs.<group>_<kind>: "true"` (or `health.lua.useOpenLibs:
true` in the block). A script tree holds scripts in the shape of Argo CD's bundled ones, which
always get those libraries, so its scripts do too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from headway.health.lua_script import LuaHealthScript
from headway.health.registry import GroupKind
from headway.model import yamlload

__all__ = [
    "CONFIGMAP_PREFIX",
    "CUSTOMIZATIONS_KEY",
    "OPEN_LIBS_PREFIX",
    "ScriptSet",
    "read_script_tree",
    "scripts_from_configmap",
    "scripts_from_files",
]

CONFIGMAP_PREFIX = "resource.customizations.health."
CUSTOMIZATIONS_KEY = "resource.customizations"
OPEN_LIBS_PREFIX = "resource.customizations.useOpenLibs."
_OPEN_LIBS_BLOCK_FIELD = "health.lua.useOpenLibs"
# Go's strconv.ParseBool, which Argo CD uses for the key.
_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}
_SCRIPT_NAME = "health.lua"


@dataclass(frozen=True)
class ScriptSet:
    scripts: Mapping[GroupKind, LuaHealthScript]
    problems: tuple[str, ...] = ()


def scripts_from_configmap(data: Mapping[str, str], *, source: str = "argocd-cm") -> ScriptSet:
    """Health scripts from argocd-cm `data`: the per-kind keys, and `health.lua` entries of
    the older `resource.customizations` YAML block (where group and kind may be globs, e.g.
    `"*.aws.crossplane.io/*"`). Per-kind keys win over the block for the same kind."""
    block = _from_customizations_block(data.get(CUSTOMIZATIONS_KEY), source=source)
    scripts: dict[GroupKind, LuaHealthScript] = dict(block.scripts)
    problems: list[str] = list(block.problems)
    for key, text in data.items():
        if not key.startswith(CONFIGMAP_PREFIX):
            continue
        group_kind = _split_key(key[len(CONFIGMAP_PREFIX) :])
        if group_kind is None or not text.strip():
            problems.append(
                f"{source}: {key}: expected `{CONFIGMAP_PREFIX}<group>_<kind>` "
                "with a non-empty Lua script"
            )
            continue
        scripts[group_kind] = LuaHealthScript(source=text, origin=f"{source}: {key}")
    open_libs = _open_libs_keys(data, source=source, problems=problems)
    for group_kind, wanted in open_libs.items():
        if group_kind in scripts:
            scripts[group_kind] = replace(scripts[group_kind], open_libs=wanted)
    return ScriptSet(scripts, tuple(problems))


def _open_libs_keys(
    data: Mapping[str, str], *, source: str, problems: list[str]
) -> dict[GroupKind, bool]:
    """`resource.customizations.useOpenLibs.<group>_<kind>` keys, as {(group, kind): bool}."""
    found: dict[GroupKind, bool] = {}
    for key, text in data.items():
        if not key.startswith(OPEN_LIBS_PREFIX):
            continue
        group_kind = _split_key(key[len(OPEN_LIBS_PREFIX) :])
        wanted = _BOOLS.get(str(text).strip())
        if group_kind is None or wanted is None:
            problems.append(
                f"{source}: {key}: expected `{OPEN_LIBS_PREFIX}<group>_<kind>` "
                f'with "true" or "false", got {text!r}'
            )
            continue
        found[group_kind] = wanted
    return found


def _from_customizations_block(text: str | None, *, source: str) -> ScriptSet:
    if not text:
        return ScriptSet({})
    where = f"{source}: {CUSTOMIZATIONS_KEY}"
    try:
        parsed = yamlload.load_one(text)
    except yaml.YAMLError as err:
        return ScriptSet({}, (f"{where}: not valid YAML: {err}",))
    if not isinstance(parsed, Mapping):
        return ScriptSet({}, (f"{where}: expected a mapping of <group>/<kind> entries",))
    scripts: dict[GroupKind, LuaHealthScript] = {}
    for key, entry in parsed.items():
        script = entry.get("health.lua") if isinstance(entry, Mapping) else None
        if isinstance(script, str) and script.strip():
            group, _, kind = str(key).rpartition("/")
            open_libs = entry.get(_OPEN_LIBS_BLOCK_FIELD) is True
            scripts[(group, kind)] = LuaHealthScript(
                source=script, origin=f"{where}: {key}", open_libs=open_libs
            )
    return ScriptSet(scripts)


def _split_key(suffix: str) -> GroupKind | None:
    # Kinds never contain "_", groups are DNS names which never do either: the last "_"
    # separates them; no "_" at all means a core kind.
    group, sep, kind = suffix.rpartition("_")
    if not kind or (sep and not group):
        return None
    return group, kind


def scripts_from_files(files: Mapping[str, str], *, root: str = "") -> ScriptSet:
    """Health scripts from `{relative path: text}` of a customization tree."""
    scripts: dict[GroupKind, LuaHealthScript] = {}
    problems: list[str] = []
    for path, text in sorted(files.items()):
        parts = Path(path).parts
        if not parts or parts[-1] != _SCRIPT_NAME:
            continue
        origin = f"{root.rstrip('/')}/{path}" if root else path
        if len(parts) == 3:
            scripts[(parts[0], parts[1])] = LuaHealthScript(text, origin, open_libs=True)
        elif len(parts) == 2:
            scripts[("", parts[0])] = LuaHealthScript(text, origin, open_libs=True)
        else:
            problems.append(f"{origin}: expected <group>/<Kind>/{_SCRIPT_NAME}")
    return ScriptSet(scripts, tuple(problems))


def read_script_tree(root: Path) -> ScriptSet:
    """Read every `health.lua` under `root` (the only disk access in `headway.health`)."""
    files = {
        str(path.relative_to(root)): path.read_text(encoding="utf-8")
        for path in root.rglob(_SCRIPT_NAME)
    }
    return scripts_from_files(files, root=str(root))
