"""The context's lookups by kind answer what a walk over every object answers (the rules
ask them instead of walking), over every rule fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from check.conftest import FIXTURES, SELF_URL
from headway.check.context import CheckContext
from headway.check.manifest import sync_wave
from headway.cli.check_loader import RepositoryLoader, normalize_url
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
        for unit in ctx.units:
            assert unit.has_kind(kind, "Nothing") == any(d.kind == kind for d in unit.objects)
    for unit in ctx.units:
        assert unit.last_wave == max((sync_wave(d.obj) for d in unit.objects), default=0)
