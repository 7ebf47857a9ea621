"""The context's lookups by kind answer what a walk over every object answers (the rules
ask them instead of walking), over every rule fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from check.conftest import FIXTURES, SELF_URL
from headway.check.context import AppUnit, CheckContext
from headway.check.manifest import name_of, namespace_of, sync_wave
from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.model.yamlload import Document
from headway.source.tree import FilesystemTree

ROOTS = sorted(p for p in FIXTURES.glob("*/*") if p.is_dir())


def _context(root: Path) -> CheckContext:
    tree = FilesystemTree(root)
    return RepositoryLoader(tree=tree, self_urls=frozenset({normalize_url(SELF_URL)})).load()


@pytest.mark.parametrize("root", ROOTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_lookups_by_kind_match_a_walk(root: Path) -> None:
    ctx = _context(root)
    kinds = {d.kind for d in ctx.all_objects} | {"Job", "CustomResourceDefinition", ""}
    for kind in sorted(kinds):
        assert list(ctx.objects_of_kind(kind)) == [d for d in ctx.all_objects if d.kind == kind]
        pairs = [(unit, d) for unit in ctx.units for d in unit.objects if d.kind == kind]
        assert [(id(u), id(d)) for u, d in ctx.units_of_kind(kind)] == [
            (id(u), id(d)) for u, d in pairs
        ]
        for unit in ctx.units:
            assert unit.has_kind(kind, "Nothing") == any(d.kind == kind for d in unit.objects)
    for unit in ctx.units:
        assert unit.last_wave == max((sync_wave(d.obj) for d in unit.objects), default=0)
        assert [unit.wave_of(d) for d in ctx.all_objects] == [
            sync_wave(d.obj) for d in ctx.all_objects
        ]


def _find_by_walk(unit: AppUnit, kind: str, name: str, namespace: str) -> Document | None:
    """`AppUnit.find` as a walk over the unit's objects (the way it read before its index)."""
    if not name:
        return None
    matches = [d for d in unit.objects if d.kind == kind and name_of(d.obj) == name]
    for doc in matches:
        if not namespace or namespace_of(doc.obj) in ("", namespace):
            return doc
    return matches[0] if matches else None


@pytest.mark.parametrize("root", ROOTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_find_matches_a_walk(root: Path) -> None:
    ctx = _context(root)
    for unit in ctx.units:
        keys = {(d.kind, name_of(d.obj)) for d in unit.objects} | {("Service", "missing")}
        namespaces = {namespace_of(d.obj) for d in unit.objects} | {"", "elsewhere"}
        for kind, name in sorted(keys):
            for namespace in sorted(namespaces):
                expected = _find_by_walk(unit, kind, name, namespace)
                assert unit.find(kind, name, namespace) is expected, (kind, name, namespace)


@pytest.mark.parametrize("root", ROOTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_documents_kind_read_once_is_its_objects_kind(root: Path) -> None:
    ctx = _context(root)
    for doc in [*ctx.all_objects, *(u.application for u in ctx.applications)]:
        assert doc is not None
        for _ in range(2):  # the second answer is the remembered one
            assert doc.kind == (str(doc.obj.get("kind", "")) if isinstance(doc.obj, dict) else "")
