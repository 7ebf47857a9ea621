"""Argo CD's Lua health tables: `resource_customizations/<group>/<Kind>/health_test.yaml`.

Each table lists cases `{healthStatus: {status, message}, inputPath: testdata/x.yaml}`. The
object is assessed through Headway's public health entry point — a `HealthRegistry` carrying
the directory's `health.lua` for the object's own group and kind — and matches when both the
status and the message are Argo's. (Argo CD spells a wildcard directory `_`; keying the
script by the object's kind runs it exactly where Argo would.) An object being deleted is
the one exception, see `_assess`.
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
from headway.model.yamlload import load_documents

__all__ = ["SUITE", "run_health_tables"]

SUITE = "Argo CD resource_customizations health"
_TABLE_FILE = "health_test.yaml"


def run_health_tables(argo_cd: Path) -> Iterator[TableResult]:
    root = argo_cd / "resource_customizations"
    for test_file in sorted(root.rglob(_TABLE_FILE)):
        yield _run_table(test_file, table=str(test_file.parent.relative_to(root)))


def _field(entry: Mapping[str, Any], name: str) -> Any:
    """A field read as Go's YAML decoder reads it: the key's case does not matter."""
    for key, value in entry.items():
        if str(key).lower() == name.lower():
            return value
    return None


def _run_table(test_file: Path, *, table: str) -> TableResult:
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
        case = _run_case(test_file.parent, entry, script=script, index=index)
        if isinstance(case, Case):
            cases.append(case)
        else:
            unreadable.append(case)
    return TableResult(SUITE, table, tuple(cases), tuple(unreadable))


def _run_case(directory: Path, entry: Any, *, script: LuaHealthScript, index: int) -> Case | str:
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
    result = _assess(obj, script)
    actual = _show(str(result.status), result.message) if result else "no health"
    want = _show(str(_field(expected, "status") or ""), str(_field(expected, "message") or ""))
    return Case(input_path, want, actual)


def _assess(obj: Mapping[str, Any], script: LuaHealthScript) -> HealthResult | None:
    """Through the registry, as Headway's controllers assess; except that an object being
    deleted goes to the script itself. The registry (like Argo CD's controller) answers
    "Pending deletion" for it before any script runs, but Argo's tables test what the
    script says about such objects, so that is what is compared."""
    if get(obj, "metadata", "deletionTimestamp") is not None:
        return script.assess(obj)
    return HealthRegistry().with_scripts({group_kind_of(obj): script}).assess(obj)


def _show(status: str, message: str) -> str:
    return f"{status} {message!r}"
