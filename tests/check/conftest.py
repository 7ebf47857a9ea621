"""Helpers for the check tests: run the loader and the rules over a fixture directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from headway.check.findings import Finding
from headway.check.registry import run_checks
from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.source.tree import FilesystemTree

FIXTURES = Path(__file__).parent / "fixtures"
SELF_URL = "https://github.com/example/fixtures.git"

CheckDir = Callable[..., list[Finding]]


def check_directory(root: Path, *, disabled: tuple[str, ...] = ()) -> list[Finding]:
    loader = RepositoryLoader(
        tree=FilesystemTree(root), self_urls=frozenset({normalize_url(SELF_URL)})
    )
    return run_checks(loader.load(), disabled=disabled)


@pytest.fixture
def check_dir() -> CheckDir:
    return check_directory


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
