"""The sandbox's pure-Lua pattern matcher agrees with LuaJIT's C matcher, case by case.

Patterns too costly to trust to C run in the pure-Lua matcher (issue 16.6); a script must not
be able to tell which one ran. Each case runs both in one LuaJIT interpreter and compares
every returned value, or that both raise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lupa import luajit21

from headway.health import lua_patterns
from headway.health.lua_script import run_health_script

SUBJECTS = [
    "",
    "hello world",
    "2026-01-01T12:34:56Z",
    "  key = value  ",
    "THE (quick) [brown] fox, jumps; over 13 lazy dogs!",
    "aaa",
    "f(a(b)c)d",
    "x\0y",
    "ERROR, disk full; ERROR, retrying",
]

PATTERNS = [
    "o",
    "l+",
    "l*",
    "l-",
    "lo?",
    "^h",
    "d$",
    "^$",
    ".",
    ".-",
    "(.-)o",
    "(o)(r)",
    "()o()",
    "%d+",
    "%D+",
    "%a+",
    "%A",
    "%s*",
    "%S+",
    "%w+",
    "%W",
    "%p",
    "%u",
    "%l+",
    "%x+",
    "%c",
    "%z",
    "[aeiou]",
    "[^aeiou ]+",
    "[%a_][%w_]*",
    "[a-f]+",
    "[]]",
    "[^]]+",
    "[%]]",
    "[a-]",
    "(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)Z",
    "^%s*(.-)%s*$",
    "(%w+)%s*=%s*(%w+)",
    "%b()",
    "%b[]",
    "%f[%w]%w+",
    "%f[%W]",
    "(a)%1",
    "((a)a)",
    "(a*(.)%w(%s*))",
    "%.",
    "%%",
    "ERROR, ",
    "^ERROR",
    "(ERROR), (%w+)",
    "[%d%s]+",
    "x%zy",
    "%bxy",
    "o(r?)l",
    "(h)(e)(l)(l)(o)",
]

BAD_PATTERNS = ["%", "[a", "(a", "a)", "%b", "%f", "%fx", "%1", "(()%2)"]

REPLACEMENTS = ["<%0>", "%1", "%%", "[%2%1]", "x%y"]

_RUNNER = (Path(__file__).parent / "compare_matchers.lua").read_bytes()


@pytest.fixture(scope="module")
def compare() -> Any:
    runtime = luajit21.LuaRuntime(register_eval=False, register_builtins=False, encoding=None)
    pure = runtime.execute(lua_patterns.SOURCE.encode())
    lua = runtime.globals()
    string = lua.string
    runner = runtime.execute(_RUNNER, pure, string.find, string.match, string.gmatch, string.gsub)

    def check(name: str, subject: str, pattern: str, extra: Any = None) -> None:
        extra_value = extra.encode() if isinstance(extra, str) else extra
        same, detail = runner(name.encode(), subject.encode(), pattern.encode(), extra_value)
        assert same, f"{name}({subject!r}, {pattern!r}, {extra!r}): {detail!r}"

    return check


@pytest.mark.parametrize("name", ["find", "match", "gmatch", "gsub_fn", "gsub_table", "find_plain"])
@pytest.mark.parametrize("pattern", PATTERNS + BAD_PATTERNS)
def test_pure_matcher_agrees_with_luajit(compare: Any, name: str, pattern: str) -> None:
    for subject in SUBJECTS:
        compare(name, subject, pattern)


@pytest.mark.parametrize("replacement", REPLACEMENTS)
def test_pure_gsub_replacement_strings_agree(compare: Any, replacement: str) -> None:
    for subject in SUBJECTS:
        for pattern in ["(o)(r)", "(%w+)", "l", "", "(h)?"]:
            compare("gsub", subject, pattern, replacement)


@pytest.mark.parametrize("start", [-100, -3, -1, 0, 1, 2, 5, 11, 12, 13, 50])
def test_pure_find_start_positions_agree(compare: Any, start: int) -> None:
    for pattern in ["o", "", "^h", "l+", "%w*$"]:
        compare("find_from", "hello world", pattern, start)


def test_scripts_get_the_same_answers_whichever_matcher_runs() -> None:
    # A subject long enough that the date pattern's bound sends it to the pure-Lua matcher.
    script = """
    local stamp = string.rep(" ", 50) .. obj.status.lastScheduleTime
    local y, mo, d, h, mi, s = string.match(stamp, "(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)Z")
    return {status = "Healthy", message = table.concat({y, mo, d, h, mi, s}, ",")}
    """
    obj = {"status": {"lastScheduleTime": "2026-03-04T05:06:07Z"}}
    result = run_health_script(script, obj, open_libs=True)
    assert result is not None and result.message == "2026,03,04,05,06,07"
