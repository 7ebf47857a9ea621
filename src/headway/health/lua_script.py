"""Argo CD-style `health.lua` scripts, run in a sandboxed LuaJIT (Lua 5.1 plus `goto`).

Contract (Argo CD's): the object is the global `obj`, as Lua tables; the script returns a
table with `status` (one of the health codes) and an optional string `message`. Returning
nothing, `nil` or an empty table gives no verdict: the registry then uses the built-in check.

What a script sees (as Argo CD, stricter where noted): the base library without loaders,
`table`, and an `os` with only `time` and `date` ("now" is the caller's clock, dates are UTC);
`require` returns those modules. `string`, `math` and `coroutine` only when the script's kind
opts in with `useOpenLibs` (Argo's built-in scripts always do). Never `io`, the rest of `os`,
`debug`, `package`, `load*`, `dofile`, `getfenv`/`setfenv`, LuaJIT's `jit`/`ffi`/`bit`, or a
bridge back to Python. Each run gets a fresh environment, so globals never leak between
objects (see `_Interpreter`).

Every run ends within its budget (see `lua_sandbox` for how): an instruction count that
covers coroutines and pattern matching, a CPU-seconds backstop, and a memory cap.
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from lupa import luajit21

from headway.health import lua_patterns, lua_sandbox
from headway.health.status import HealthResult, HealthStatus
from headway.kubetime import format_time

__all__ = [
    "DEFAULT_INSTRUCTION_BUDGET",
    "LuaHealthScript",
    "run_health_script",
]

# LuaJIT's interpreter (JIT off, hook on) runs roughly 1e8 simple instructions per second.
DEFAULT_INSTRUCTION_BUDGET = 100_000_000
_CPU_SECONDS = 1.0
_MAX_MEMORY = 64 * 1024 * 1024
_RECYCLE_MEMORY = 8 * 1024 * 1024
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_INT64 = 2**63
_CLOCK_NAMES = re.compile(r"\b(os|require|_G|_ENV)\b")


@dataclass(frozen=True)
class LuaHealthScript:
    """One health script, where it came from (shown in error messages), and whether it gets
    Lua's string, math and coroutine libraries (argocd-cm's `useOpenLibs`)."""

    source: str
    origin: str
    open_libs: bool = False

    def assess(self, obj: Mapping[str, Any], *, now: datetime | None = None) -> HealthResult | None:
        return run_health_script(self.source, obj, open_libs=self.open_libs, now=now)

    @functools.cached_property
    def reads_clock(self) -> bool:
        """Whether the script may read "now" (`os.time()`, `os.date()`), so that its verdict
        on an unchanged object can change with time. Read from the source, erring towards
        yes: any mention of `os`, or of the ways to reach it by another name (`require`,
        `_G`), counts."""
        return _CLOCK_NAMES.search(self.source) is not None


def run_health_script(
    source: str,
    obj: Mapping[str, Any],
    *,
    budget: int = DEFAULT_INSTRUCTION_BUDGET,
    open_libs: bool = False,
    now: datetime | None = None,
) -> HealthResult | None:
    """Run `source` against `obj`: its verdict, or None when it gives none (nil or `{}`).

    Syntax and runtime errors, a blown budget, running out of memory, a result that is not
    a table and a non-string status or message all give Unknown with the reason; a status
    outside the six codes gives Unknown "Lua returned an invalid health status"."""
    interpreter = _interpreter()
    try:
        kind, status, message = interpreter.run(
            source,
            interpreter.runtime.table_from(_plain(dict(obj)), recursive=True),
            open_libs,
            _epoch_seconds(now),
            budget,
            _CPU_SECONDS,
            lua_patterns.C_WORK_LIMIT,
        )
    except luajit21.LuaMemoryError:
        _THREAD.interpreter = None
        return HealthResult(HealthStatus.UNKNOWN, "health script error: not enough memory")
    except luajit21.LuaError as err:  # only the budget unwinding reaches here
        _THREAD.interpreter = None
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        return HealthResult(HealthStatus.UNKNOWN, f"health script error: {reason}")
    finally:
        interpreter.clear_hook()  # a C function: no instruction runs under a spent budget
    if interpreter.runtime.get_memory_used() > _RECYCLE_MEMORY:
        _THREAD.interpreter = None
    return _to_result(str(kind), str(status), str(message))


@dataclass(frozen=True)
class _Interpreter:
    """A LuaJIT interpreter with the sandbox loaded. Each run builds a fresh environment for
    its script (globals, library tables, `obj`), so runs share nothing a script can reach; an
    interpreter is still replaced after a run that blew its budget or memory, or left much
    garbage, so that no run starts from a strained one."""

    runtime: Any
    run: Any
    clear_hook: Any


_THREAD = threading.local()


def _interpreter() -> _Interpreter:
    interpreter: _Interpreter | None = getattr(_THREAD, "interpreter", None)
    if interpreter is None:
        runtime = luajit21.LuaRuntime(
            register_eval=False,
            register_builtins=False,
            unpack_returned_tuples=True,
            max_memory=_MAX_MEMORY,
            attribute_filter=_no_python_attributes,
        )
        lua = runtime.globals()
        patterns_code, prelude_code = _bytecode()
        run = lua.loadstring(prelude_code)(lua.loadstring(patterns_code)())
        interpreter = _Interpreter(runtime, run, lua.debug.sethook)
        _THREAD.interpreter = interpreter
    return interpreter


@functools.cache
def _bytecode() -> tuple[bytes, bytes]:
    """The sandbox's Lua code, compiled once per process: loading bytecode into each fresh
    interpreter is several times cheaper than parsing the source again."""
    compiler = luajit21.LuaRuntime(register_eval=False, register_builtins=False, encoding=None)
    dump = compiler.eval(
        "function(source) return string.dump(assert(loadstring(source)), true) end"
    )
    return bytes(dump(lua_patterns.SOURCE.encode())), bytes(dump(lua_sandbox.PRELUDE.encode()))


def _to_result(kind: str, status: str, message: str) -> HealthResult | None:
    if kind == "none":
        return None
    if kind == "error":
        return HealthResult(HealthStatus.UNKNOWN, message)
    try:
        code = HealthStatus(status)
    except ValueError:
        return HealthResult(HealthStatus.UNKNOWN, "Lua returned an invalid health status")
    return HealthResult(code, message)


def _epoch_seconds(now: datetime | None) -> int:
    moment = now if now is not None else datetime.now(UTC)
    return math.floor((moment - _EPOCH).total_seconds())


def _plain(value: Any) -> Any:
    """The object as JSON would carry it: YAML timestamps become RFC 3339 strings, as the
    API server sends them (scripts parse them with string.match); integers beyond 64 bits
    become floats, and anything else that is not JSON becomes its text."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, bool | str | float):
        return value
    if isinstance(value, int):
        return value if -_INT64 <= value < _INT64 else _as_float(value)
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def _as_float(value: int) -> float | str:
    """A number too large for Lua's integers, as JSON's float64 would read it."""
    try:
        return float(value)
    except OverflowError:
        return str(value)


def _no_python_attributes(obj: object, name: object, is_setting: bool) -> str:
    raise AttributeError("health scripts cannot reach Python objects")
