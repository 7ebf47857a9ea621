"""Argo CD's Lua health tables: `resource_customizations/<group>/<Kind>/health_test.yaml`.

Each table lists cases `{healthStatus: {status, message}, inputPath: testdata/x.yaml}`. The
object is assessed through Headway's public health entry point — a `HealthRegistry` carrying
every `health.lua` of the tree, as Argo's own table test looks the script up among all of them
by the object's kind (a `_` directory is a wildcard) — and matches when both the status and
the message are Argo's. An object being deleted is the one exception, see `_assess`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from headway.conformance.tables import Case, TableResult
from headway.health import HealthRegistry, HealthResult, group_kind_of
from headway.health.fields import get
from headway.health.lua_script import LuaHealthScript
from headway.health.overrides import scripts_from_files
from headway.health.registry import GroupKind
from headway.model.yamlload import load_documents

__all__ = ["SUITE", "run_health_tables"]

SUITE = "Argo CD resource_customizations health"
_TABLE_FILE = "health_test.yaml"


def run_health_tables(argo_cd: Path) -> Iterator[TableResult]:
    root = argo_cd / "resource_customizations"
    registry = HealthRegistry().with_scripts(_all_scripts(root))
    for test_file in sorted(root.rglob(_TABLE_FILE)):
        yield _run_table(
            test_file, table=str(test_file.parent.relative_to(root)), registry=registry
        )


def _all_scripts(root: Path) -> dict[GroupKind, LuaHealthScript]:
    """Every script of the tree, keyed as Argo CD looks them up: a `_` directory is `*`.

    Argo's own table test asks for the script of the object's kind among all of them (so a
    Provider in the `_.crossplane.io/_` table is assessed by `pkg.crossplane.io/Provider`'s
    script); giving the registry all of them does the same."""
    files: dict[str, str] = {}
    for path in sorted(root.rglob("health.lua")):
        try:
            files[str(path.relative_to(root))] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # that table reports the unreadable script
    scripts = scripts_from_files(files, root=str(root)).scripts
    return {(_glob(group), _glob(kind)): script for (group, kind), script in scripts.items()}


def _glob(part: str) -> str:
    return "*" + part[1:] if part.startswith("_") else part


def _field(entry: Mapping[str, Any], name: str) -> Any:
    """A field read as Go's YAML decoder reads it: the key's case does not matter."""
    for key, value in entry.items():
        if str(key).lower() == name.lower():
            return value
    return None


def _run_table(test_file: Path, *, table: str, registry: HealthRegistry) -> TableResult:
    script_file = test_file.parent / "health.lua"
    try:
        tests = _field(yaml.safe_load(test_file.read_text(encoding="utf-8")) or {}, "tests")
        source = script_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        return TableResult(SUITE, table, unreadable=(f"{test_file}: {err}",))
    script = next(iter(scripts_from_files({"group/Kind/health.lua": source}).scripts.values()))
    cases: list[Case] = []
    unreadable: list[str] = []
    for index, entry in enumerate(tests if isinstance(tests, list) else []):
        case = _run_case(test_file.parent, entry, registry=registry, own=script, index=index)
        if isinstance(case, Case):
            cases.append(case)
        else:
            unreadable.append(case)
    return TableResult(SUITE, table, tuple(cases), tuple(unreadable))


def _run_case(
    directory: Path, entry: Any, *, registry: HealthRegistry, own: LuaHealthScript, index: int
) -> Case | str:
    if not isinstance(entry, Mapping):
        return f"case {index}: not a mapping"
    expected = _field(entry, "healthStatus") or {}
    input_path = _field(entry, "inputPath")
    if not isinstance(input_path, str) or not isinstance(expected, Mapping):
        return f"case {index}: no inputPath or healthStatus"
    try:
        text = (directory / input_path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return f"case {index} ({input_path}): {err}"
    loaded = load_documents(text, str(directory / input_path))  # as Headway reads manifests
    objects = [document.obj for document in loaded.documents]
    if loaded.diagnostics or len(objects) != 1 or not isinstance(objects[0], Mapping):
        return f"case {index} ({input_path}): not one readable object"
    obj = objects[0]
    result = _assess(obj, registry, own=own)
    actual = _show(str(result.status), result.message) if result else "no health"
    want = _show(str(_field(expected, "status") or ""), str(_field(expected, "message") or ""))
    return Case(input_path, want, actual)


def _assess(
    obj: Mapping[str, Any], registry: HealthRegistry, *, own: LuaHealthScript
) -> HealthResult | None:
    """Through the registry, as Headway's controllers assess; except that an object being
    deleted goes to a script directly (its kind's, else the table's own). The registry (like
    Argo CD's controller) answers "Pending deletion" for it before any script runs, but
    Argo's tables test what the script says about such objects, so that is compared."""
    if get(obj, "metadata", "deletionTimestamp") is not None:
        return registry.scripts.get(group_kind_of(obj), own).assess(obj)
    return registry.assess(obj)


def _show(status: str, message: str) -> str:
    return f"{status} {message!r}"
