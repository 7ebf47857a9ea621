"""The code `dataclasses` generates, kept between runs of the program (cli/dataclass_code.py):
a class made from kept code has the very methods the builtin `exec` would have made; a cache
file that is damaged, foreign or writable by others is not read; the program keeps the code
and prints the same; in-process callers and `--version` leave `dataclasses` alone."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from headway.cli import dataclass_code


def make_classes() -> list[type[Any]]:
    """Classes covering what `dataclasses` writes methods for: frozen, ordered, keyword-only,
    slots, defaults and factories, InitVar and ClassVar, `__post_init__`, inheritance."""

    @dataclass(frozen=True)
    class Point:
        x: int
        y: int = 0
        tags: tuple[str, ...] = ()

    @dataclass(order=True, kw_only=True)
    class Version:
        major: int
        minor: int = 0
        notes: list[str] = field(default_factory=list, compare=False)

    @dataclass(slots=True)
    class Slotted:
        name: str
        size: int = field(default=1, repr=False)

    @dataclass
    class Derived:
        base: int
        seed: InitVar[int] = 3
        kind: ClassVar[str] = "derived"
        total: int = field(init=False, default=0)

        def __post_init__(self, seed: int) -> None:
            self.total = self.base + seed

    @dataclass(frozen=True, eq=False)
    class Child(Point):
        z: int = 9

    return [Point, Version, Slotted, Derived, Child]


METHODS = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__lt__")


def codes(classes: list[type[Any]]) -> list[tuple[str, str, object]]:
    made = []
    for cls in classes:
        for name in METHODS:
            method = cls.__dict__.get(name)
            code = getattr(method, "__code__", None)
            made.append((cls.__name__, name, code))
    return made


def behaviour(classes: list[type[Any]]) -> list[object]:
    point, version, slotted, derived, child = classes
    frozen = point(1, 2)
    try:
        frozen.x = 5
        refused = False
    except dataclasses.FrozenInstanceError:
        refused = True
    return [
        repr(frozen),
        frozen == point(1, 2),
        hash(frozen) == hash(point(1, 2)),
        refused,
        version(major=1) < version(major=1, minor=1),
        repr(slotted("a")),
        derived(2).total,
        repr(child(1)),
        child(1) == child(1),
    ]


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("HEADWAY_DATACLASS_CACHE", raising=False)
    assert not dataclass_code.installed()
    yield dataclass_code.cache_file()
    dataclass_code.uninstall()
    assert not hasattr(dataclasses, "exec")


def test_kept_code_makes_the_methods_the_builtin_makes(kept: Path) -> None:
    builtin = make_classes()
    dataclass_code.install()
    compiled_here = make_classes()
    assert dataclass_code.texts_compiled() > 0
    dataclass_code.uninstall()  # saves
    assert kept.is_file()
    dataclass_code.install()
    from_the_file = make_classes()
    assert dataclass_code.texts_compiled() == 0  # every text came from the file
    assert codes(from_the_file) == codes(builtin) == codes(compiled_here)
    assert behaviour(from_the_file) == behaviour(builtin)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "writable-by-others", "other-format"])
def test_a_file_that_cannot_be_trusted_is_not_read_and_is_replaced(kept: Path, damage: str) -> None:
    dataclass_code.install()
    make_classes()
    dataclass_code.uninstall()
    content = kept.read_bytes()
    if damage == "garbage":
        kept.write_bytes(content[:40] + bytes(len(content) - 40))
    elif damage == "truncated":
        kept.write_bytes(content[: len(content) // 2])
    elif damage == "writable-by-others":
        kept.chmod(0o666)
    else:
        kept.write_bytes(content.replace(b"headway-dataclass-code 1", b"headway-dataclass-code 9"))
    dataclass_code.install()
    classes = make_classes()
    assert dataclass_code.texts_compiled() > 0  # nothing read: every text compiled
    assert behaviour(classes) == behaviour(make_classes())
    dataclass_code.uninstall()
    if damage != "writable-by-others":  # rewritten whole, readable again
        dataclass_code.install()
        make_classes()
        assert dataclass_code.texts_compiled() == 0


def test_a_call_without_globals_runs_in_the_callers_namespace(kept: Path) -> None:
    dataclass_code.install()
    exec_in_dataclasses = dataclasses.exec  # type: ignore[attr-defined]
    answer: dict[str, object] = {}
    marker = "here"
    exec_in_dataclasses("answer['seen'] = marker")
    assert answer == {"seen": "here"}
    assert marker == "here"


PROGRAM = """
import dataclasses, json, sys
from headway.cli import entry
sys.argv = ["headway", *sys.argv[2:]]
import atexit
atexit.register(lambda: print(json.dumps({"installed": hasattr(dataclasses, "exec")}),
                              file=sys.stderr))
(entry.run if sys.argv and __import__("os").environ["MODE"] == "run" else entry.main)()
"""


def run(cwd: Path, mode: str, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, "-", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "MODE": mode, **env},
        timeout=120,
        check=False,
    )


def installed(done: subprocess.CompletedProcess[str]) -> bool:
    answer: dict[str, bool] = json.loads(done.stderr.strip().splitlines()[-1])
    return answer["installed"]


def test_the_program_keeps_the_code_and_prints_the_same(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    cache = tmp_path / "cache"
    first = run(tmp_path, "run", "check", "-o", "json", ".", XDG_CACHE_HOME=str(cache))
    files = list((cache / "headway" / "code").glob("dataclasses-*.marshal"))
    assert len(files) == 1
    again = run(tmp_path, "run", "check", "-o", "json", ".", XDG_CACHE_HOME=str(cache))
    plain = run(tmp_path, "main", "check", "-o", "json", ".", XDG_CACHE_HOME=str(cache))
    assert (first.stdout, first.returncode) == (again.stdout, again.returncode)
    assert (again.stdout, again.returncode) == (plain.stdout, plain.returncode)
    assert installed(plain) is False  # in-process callers of `entry.main()`: left alone


def test_version_and_a_switched_off_cache_make_no_file(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    version = run(tmp_path, "run", "--version", XDG_CACHE_HOME=str(cache))
    assert version.returncode == 0
    assert installed(version) is False
    off = run(
        tmp_path, "run", "validate", ".", XDG_CACHE_HOME=str(cache), HEADWAY_DATACLASS_CACHE="0"
    )
    assert off.returncode == 0, off.stderr
    assert installed(off) is False
    assert not (cache / "headway" / "code").exists()


def test_an_unwritable_cache_changes_nothing_but_speed(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    cache = tmp_path / "cache"
    cache.write_text("a file where the cache directory would be\n")
    done = run(tmp_path, "run", "validate", "pod.yaml", XDG_CACHE_HOME=str(cache))
    plain = run(tmp_path, "main", "validate", "pod.yaml", XDG_CACHE_HOME=str(cache))
    assert (done.stdout, done.returncode) == (plain.stdout, plain.returncode)
    assert done.stderr.strip().splitlines()[:-1] == []  # only the probe's line
