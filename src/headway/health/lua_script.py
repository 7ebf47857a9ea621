"""Argo CD-style `health.lua` scripts, run in a sandboxed Lua 5.1.

Contract (Argo CD's): the object is the global `obj`, as Lua tables; the script returns a
table with `status` (one of the health codes) and an optional `message`. Scripts see only
the base library without loaders, `string` (without `dump`), `table`, `math` and
`coroutine`: no `os`, `io`, `debug`, `package`/`require`, `load*`, `dofile`, and no bridge
back to Python. Each run gets a fresh interpreter, so globals never leak between objects.

Runaway scripts are stopped by an instruction budget checked from a count hook (sized to
about one second of Lua on these machines, and deterministic, unlike a wall-clock limit),
with a CPU-seconds guard in the same hook as a backstop, and memory is capped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lupa import lua51

from headway.health.status import HealthResult, HealthStatus

__all__ = [
    "DEFAULT_INSTRUCTION_BUDGET",
    "LuaHealthScript",
    "run_health_script",
]

# Lua 5.1 here runs roughly 1e8 simple VM instructions per second.
DEFAULT_INSTRUCTION_BUDGET = 100_000_000
_HOOK_EVERY = 10_000
_CPU_SECONDS = 1.0
_MAX_MEMORY = 64 * 1024 * 1024

# Runs before the sandbox is sealed: keeps private references to what the runner needs,
# installs the budget hook, then removes every dangerous global.
_SANDBOX = """
local sethook, clock, loadstring, pcall, error = debug.sethook, os.clock, loadstring, pcall, error
local budget_exceeded = "health script exceeded its time limit (1s)"
for _, name in ipairs({"os", "io", "debug", "package", "require", "module", "load",
                       "loadstring", "loadfile", "dofile", "python", "newproxy",
                       "gcinfo", "collectgarbage"}) do
  _G[name] = nil
end
string.dump = nil
return function(source, steps, every, cpu_limit)
  local chunk, err = loadstring(source, "=health.lua")
  if chunk == nil then return false, err end
  local used, started = 0, clock()
  local function guard()
    used = used + every
    if used > steps or clock() - started > cpu_limit then
      -- from now on every instruction fails, so a script's own pcall cannot swallow this
      sethook(function() error(budget_exceeded, 0) end, "", 1)
      error(budget_exceeded, 0)
    end
  end
  sethook(guard, "", every)
  local ok, result = pcall(chunk)
  sethook()
  return ok, result
end
"""


@dataclass(frozen=True)
class LuaHealthScript:
    """One health script and where it came from (shown in error messages)."""

    source: str
    origin: str

    def assess(self, obj: Mapping[str, Any]) -> HealthResult:
        return run_health_script(self.source, obj)


def run_health_script(
    source: str, obj: Mapping[str, Any], *, budget: int = DEFAULT_INSTRUCTION_BUDGET
) -> HealthResult:
    """Run `source` against `obj`. Syntax and runtime errors, a blown budget, a non-table
    result and an invalid status all give Unknown with the reason as the message."""
    runtime = lua51.LuaRuntime(
        register_eval=False,
        register_builtins=False,
        unpack_returned_tuples=True,
        max_memory=_MAX_MEMORY,
    )
    try:
        runner = runtime.execute(_SANDBOX)
        runtime.globals()["obj"] = runtime.table_from(dict(obj), recursive=True)
        ok, result = runner(source, budget, _HOOK_EVERY, _CPU_SECONDS)
    except (lua51.LuaError, MemoryError) as err:  # out of memory, or the budget unwinding
        return HealthResult(HealthStatus.UNKNOWN, f"health script error: {err}")
    if not ok:
        return HealthResult(HealthStatus.UNKNOWN, str(result))
    return _to_result(result)


def _to_result(value: Any) -> HealthResult:
    if lua51.lua_type(value) != "table":
        return HealthResult(
            HealthStatus.UNKNOWN,
            f"health script must return a table, got {lua51.lua_type(value) or type(value)}",
        )
    status, message = value["status"], value["message"]
    try:
        code = HealthStatus(status)
    except ValueError:
        return HealthResult(HealthStatus.UNKNOWN, "Lua returned an invalid health status")
    return HealthResult(code, message if isinstance(message, str) else "")
