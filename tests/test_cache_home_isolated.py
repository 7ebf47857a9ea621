"""The test session keeps its caches to itself (tests/conftest.py `_private_cache_home`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from headway.cli.check_parse_cache import cache_directory


def test_caches_live_under_the_sessions_temporary_directory(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    home_cache = Path(os.path.expanduser("~"), ".cache").resolve()
    check_cache = cache_directory().resolve()
    assert check_cache.is_relative_to(tmp_path_factory.getbasetemp().resolve())
    assert not check_cache.is_relative_to(home_cache)
