"""The parse cache's fingerprint names the yaml_rs reader too (cli/check_parse_cache.py): a
cache written with another yaml_rs, or another screen in model/yamlrust.py, is not read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from headway.cli import check_parse_cache
from headway.model import yamlrust


@pytest.fixture(autouse=True)
def _fresh_fingerprint() -> Iterator[None]:
    check_parse_cache.fingerprint.cache_clear()
    yield
    check_parse_cache.fingerprint.cache_clear()


def test_another_yaml_rs_installation_changes_the_fingerprint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = check_parse_cache.fingerprint()
    assert "_yaml_rs" in check_parse_cache._yaml_rs_files()  # the compiled module is named
    monkeypatch.setattr(check_parse_cache, "_yaml_rs_files", lambda: "_yaml_rs.so 1 2")
    check_parse_cache.fingerprint.cache_clear()
    assert check_parse_cache.fingerprint() != before


def test_the_screen_s_source_is_part_of_the_fingerprint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    before = check_parse_cache.fingerprint()
    edited = tmp_path / "yamlrust.py"
    edited.write_bytes(Path(str(yamlrust.__file__)).read_bytes() + b"\n# another screen\n")
    monkeypatch.setattr(yamlrust, "__file__", str(edited))
    check_parse_cache.fingerprint.cache_clear()
    assert check_parse_cache.fingerprint() != before
