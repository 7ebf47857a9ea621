"""The condition parser's tables are cached on disk between processes (a new `headway check`
loads them instead of building them from the grammar), and the cache changes no result:
every condition of the language tests, and every syntax error, compiles to the same values
and messages with no cache file, with a good one, with a corrupt or truncated one, and with
no cache directory at all. Each case runs in a fresh interpreter with its own cache home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

BAD_CONDITIONS = ("result[0] <", "len(result) >", "1 +* 2", "all(result, {# < 1", "'open")

_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
if sys.argv[2] == "no-build":  # the tables must come from the cache file
    import lark.lark
    def refuse(*args, **kwargs):
        raise AssertionError("the grammar was built, not loaded from the cache")
    lark.lark.load_grammar = refuse
from test_language import CASES, ENV
from headway.expr.errors import ConditionSyntaxError
from headway.expr.program import compile_condition
out = []
for text in [c for c, _ in CASES] + json.loads(sys.argv[3]):
    try:
        out.append(["value", repr(compile_condition(text).evaluate(ENV))])
    except ConditionSyntaxError as err:
        out.append(["syntax", str(err), err.line, err.column])
    except Exception as err:
        out.append(["error", str(err)])
print(json.dumps(out))
"""


def _results(cache_home: Path, *, must_load: bool = False) -> list[object]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    mode = "no-build" if must_load else "any"
    command = [sys.executable, "-c", _PROBE, str(HERE), mode, json.dumps(BAD_CONDITIONS)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    results: list[object] = json.loads(done.stdout)
    return results


def _cache_files(cache_home: Path) -> list[Path]:
    return sorted((cache_home / "headway").glob("conditions-*.cache"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[object]]:
    """Results with no cache file (the process builds the tables and writes the file)."""
    home = tmp_path_factory.mktemp("cache-home")
    return home, _results(home)


def test_the_first_process_writes_the_tables_and_the_next_loads_them(
    built: tuple[Path, list[object]],
) -> None:
    home, first = built
    assert len(_cache_files(home)) == 1
    assert _results(home, must_load=True) == first


def test_every_result_is_the_same_as_without_a_cache(built: tuple[Path, list[object]]) -> None:
    _, first = built
    assert [r[0] for r in first].count("syntax") >= len(BAD_CONDITIONS)  # errors are compared
    home, first = built
    assert _results(home) == first


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_damaged_cache_file_is_rebuilt_with_the_same_results(
    built: tuple[Path, list[object]], tmp_path: Path, damage: str
) -> None:
    home, first = built
    (good,) = _cache_files(home)
    (tmp_path / "headway").mkdir()
    damaged = tmp_path / "headway" / good.name
    data = good.read_bytes()
    bad = {"garbage": b"not a cache\n\x00\x01", "truncated": data[: len(data) // 2], "empty": b""}
    damaged.write_bytes(bad[damage])
    assert _results(tmp_path) == first
    assert damaged.read_bytes() != bad[damage]  # rebuilt and written again
    assert _results(tmp_path, must_load=True) == first


def test_no_cache_directory_means_building_every_time(
    built: tuple[Path, list[object]], tmp_path: Path
) -> None:
    _, first = built
    blocked = tmp_path / "a-file"
    blocked.write_text("the cache home is a file, so no directory can be made under it\n")
    assert _results(blocked) == first


@pytest.mark.parametrize("writable", ["file", "directory"])
def test_tables_another_user_could_write_are_not_loaded(
    built: tuple[Path, list[object]], tmp_path: Path, writable: str
) -> None:
    """Lark unpickles the file: where the group or others may write the file or its
    directory (`private_files`), the grammar is built instead, with the same results."""
    _, first = built
    assert _results(tmp_path) == first  # writes this home's file (Lark keys it by its path)
    assert _results(tmp_path, must_load=True) == first  # private: loaded
    (written,) = _cache_files(tmp_path)
    target = written if writable == "file" else written.parent
    target.chmod(0o666 if writable == "file" else 0o777)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    command = [sys.executable, "-c", _PROBE, str(HERE), "no-build", json.dumps(BAD_CONDITIONS)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert "the grammar was built" in done.stdout  # not loaded (each condition says so)
    assert _results(tmp_path) == first
