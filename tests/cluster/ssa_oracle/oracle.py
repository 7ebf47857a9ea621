"""The structured-merge-diff oracle (tools/smd-oracle) and the local store, run on the same
operations, each answer reduced to one comparable shape.

`Step` is what either side decided after one operation: the object's managed content, the
fields each (manager, operation) owns as structured-merge-diff names them, and the
(field, manager) pairs of a refused apply's conflicts.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from headway.cluster.errors import FieldConflict, NotFound
from headway.cluster.local.api.fieldpaths import render_path
from headway.cluster.local.api.store import LocalCluster
from headway.model.obj import Obj

REPO = Path(__file__).resolve().parents[3]
ORACLE = REPO / "build" / "smd-oracle" / "smd-oracle"
BUILD_SCRIPT = REPO / "scripts" / "build-smd-oracle"

Field = tuple[str, ...]
OperationKind = Literal["Apply", "Update"]


@dataclass(frozen=True)
class Operation:
    manager: str
    operation: OperationKind
    content: Mapping[str, Any]  # the managed part: metadata's labels/annotations/finalizers, spec
    force: bool = False


@dataclass(frozen=True)
class Step:
    content: Any
    owned: frozenset[tuple[str, str, frozenset[Field]]]  # (manager, operation, fields)
    conflicts: frozenset[tuple[str, str]]  # (field as `.spec.replicas`, manager)
    refused: bool


def oracle_binary() -> Path:
    """The oracle, built now if it is missing or older than its sources.

    Skipped when Go or the library is not installed, and failed instead under
    HEADWAY_REQUIRE_SYSTEM_PACKAGES=1 (scripts/test), so CI cannot go green by skipping.
    """
    return _built_oracle()


@functools.cache
def _built_oracle() -> Path:
    check = subprocess.run([BUILD_SCRIPT, "--check"], check=False, capture_output=True, text=True)
    if check.returncode != 0:
        message = check.stderr.strip() or "the structured-merge-diff oracle cannot be built"
        if os.environ.get("HEADWAY_REQUIRE_SYSTEM_PACKAGES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    built = subprocess.run([BUILD_SCRIPT], check=False, capture_output=True, text=True)
    if built.returncode != 0:
        pytest.fail(f"scripts/build-smd-oracle failed:\n{built.stderr}")
    return ORACLE


def run_oracle(operations: Sequence[Operation]) -> list[Step]:
    request = {"operations": [
        {"manager": op.manager, "operation": op.operation, "object": _named(op.content),
         "force": op.force}
        for op in operations
    ]}
    answer = subprocess.run(
        [oracle_binary()], input=json.dumps(request), capture_output=True, text=True,
        check=True,
    )
    return [_oracle_step(raw) for raw in json.loads(answer.stdout)["steps"]]


def _oracle_step(raw: Mapping[str, Any]) -> Step:
    owned = frozenset(
        (m["manager"], m["operation"], frozenset(canonical(f) for f in m["fields"]))
        for m in raw["managed"]
    )
    conflicts = frozenset(
        (render_path(canonical(c["field"])), c["manager"]) for c in raw["conflicts"])
    if raw["error"] and not conflicts:
        raise AssertionError(f"the oracle refused an operation for another reason: {raw['error']}")
    return Step(_unnamed(raw["object"] or {}), owned, conflicts, refused=bool(conflicts))


def _named(content: Mapping[str, Any]) -> dict[str, Any]:
    """The object as a client sends it: with its name and namespace."""
    meta = {"name": "obj", "namespace": "default", **content.get("metadata", {})}
    return {**content, "metadata": meta}


def _unnamed(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The managed part of an object: what is left without its name and namespace."""
    out = dict(obj)
    meta = {k: v for k, v in out.pop("metadata", {}).items() if k not in ("name", "namespace")}
    return {**out, "metadata": meta} if meta else out


def canonical(field: Sequence[str]) -> Field:
    """A field path with its key and value elements in one JSON spelling."""
    return tuple(_canonical_element(e) for e in field)


def _canonical_element(element: str) -> str:
    if element[:2] not in ("k:", "v:"):
        return element
    return element[:2] + json.dumps(json.loads(element[2:]), sort_keys=True, separators=(",", ":"))


class StoreRunner:
    """Runs operations on one Deployment in a real local store, one fresh name per sequence."""

    def __init__(self, store: LocalCluster) -> None:
        self._store = store
        self._sequences = 0

    def run(self, operations: Sequence[Operation]) -> list[Step]:
        self._sequences += 1
        name = f"seq-{self._sequences}"
        steps = []
        for op in operations:
            try:
                current = self._write(name, op)
            except FieldConflict as conflict:
                steps.append(self._step(self._current(name), conflict.conflicts))
            else:
                steps.append(self._step(current, ()))
        return steps

    def _write(self, name: str, op: Operation) -> Obj:
        obj = deployment(name, op.content)
        if op.operation == "Apply":
            return self._store.apply(obj, field_manager=op.manager, force=op.force)
        if self._current(name) is None:
            return self._store.create(obj, field_manager=op.manager)
        return self._store.update(obj, field_manager=op.manager)

    def _current(self, name: str) -> Obj | None:
        try:
            return self._store.get("apps/v1", "Deployment", name, "default")
        except NotFound:
            return None

    @staticmethod
    def _step(obj: Obj | None, conflicts: Sequence[tuple[str, str]]) -> Step:
        if obj is None:
            return Step({}, frozenset(), frozenset(conflicts), refused=bool(conflicts))
        meta = obj["metadata"]
        content: dict[str, Any] = {}
        managed_meta = {k: meta[k] for k in ("labels", "annotations", "finalizers") if k in meta}
        if managed_meta:
            content["metadata"] = managed_meta
        if "spec" in obj:
            content["spec"] = obj["spec"]
        owned = frozenset(
            (entry["manager"], entry["operation"], frozenset(_members(entry["fieldsV1"], ())))
            for entry in meta.get("managedFields", [])
        )
        return Step(content, owned, frozenset(conflicts), refused=bool(conflicts))


def _members(trie: Mapping[str, Any], prefix: Field) -> list[Field]:
    """The fields a fieldsV1 trie names: `.` marks its parent as a member itself."""
    out: list[Field] = []
    for element, child in trie.items():
        if element == ".":
            out.append(prefix)
        elif child:
            out.extend(_members(child, (*prefix, element)))
        else:
            out.append(canonical((*prefix, element)))
    return [canonical(f) for f in out]


def deployment(name: str, content: Mapping[str, Any]) -> Obj:
    metadata = {"name": name, "namespace": "default", **content.get("metadata", {})}
    obj: Obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata}
    if "spec" in content:
        obj["spec"] = content["spec"]
    return obj


def assert_agree(runner: StoreRunner, operations: Sequence[Operation]) -> None:
    """Run `operations` on both sides; fail at the first step where they disagree."""
    expected = run_oracle(operations)
    actual = runner.run(operations)
    for n, (op, want, got) in enumerate(zip(operations, expected, actual, strict=True)):
        where = f"after operation {n} ({op.operation} by {op.manager}, force={op.force})"
        _same(f"{where}: conflicts", sorted(got.conflicts), sorted(want.conflicts))
        _same(f"{where}: object", comparable(got.content), comparable(want.content))
        _same(f"{where}: owned fields", _by_manager(got.owned), _by_manager(want.owned))


def _same(what: str, store: Any, oracle: Any) -> None:
    if store != oracle:
        raise AssertionError(
            f"{what} differ\n  local store:           {json.dumps(store, sort_keys=True)}"
            f"\n  structured-merge-diff: {json.dumps(oracle, sort_keys=True)}")


def _by_manager(owned: frozenset[tuple[str, str, frozenset[Field]]]) -> dict[str, list[str]]:
    return {f"{m}/{op}": sorted(render_path(f) + ("" if f else ".") for f in fields)
            for m, op, fields in owned}


def comparable(value: Any, field: str = "") -> Any:
    """`value` with the order of keyed lists and sets left out (Kubernetes keeps their
    order by its own rules; what they hold is what counts here).

    A map emptied by a removal is `null` in the library's untyped values and `{}` once the
    API server decodes it into a Go struct (a Deployment's spec); the sequences never write
    `null`, so the two are the same here.
    """
    if value is None:
        return {}
    if isinstance(value, dict):
        return {k: comparable(v, k) for k, v in value.items()}
    if isinstance(value, list):
        items = [comparable(v) for v in value]
        if field in _UNORDERED:
            return sorted(items, key=lambda i: json.dumps(i, sort_keys=True))
        return items
    return value


_UNORDERED = frozenset({
    "containers", "initContainers", "env", "ports", "finalizers", "volumes", "volumeMounts"})
