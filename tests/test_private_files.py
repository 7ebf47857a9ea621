"""Cache files whose content runs as code are trusted only when this user alone could have
written them (headway/private_files.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.private_files import private_path

pytestmark = pytest.mark.skipif(not hasattr(__import__("os"), "getuid"), reason="POSIX owners")


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    private = tmp_path / "cache"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    return private


def test_a_private_file_in_a_private_directory_is_trusted(directory: Path) -> None:
    file = directory / "tables"
    file.write_bytes(b"x")
    file.chmod(0o600)
    assert private_path(file)


def test_a_file_not_made_yet_in_a_private_directory_may_be_made(directory: Path) -> None:
    assert private_path(directory / "tables")


def test_no_directory_is_not_trusted(tmp_path: Path) -> None:
    assert not private_path(tmp_path / "missing" / "tables")


@pytest.mark.parametrize("mode", [0o664, 0o666, 0o646])
def test_a_file_others_may_write_is_not_trusted(directory: Path, mode: int) -> None:
    file = directory / "tables"
    file.write_bytes(b"x")
    file.chmod(mode)
    assert not private_path(file)


@pytest.mark.parametrize("mode", [0o770, 0o777, 0o1777])
def test_a_directory_others_may_write_is_not_trusted(directory: Path, mode: int) -> None:
    file = directory / "tables"
    file.write_bytes(b"x")
    file.chmod(0o600)
    directory.chmod(mode)
    assert not private_path(file)
    assert not private_path(directory / "not-made-yet")
