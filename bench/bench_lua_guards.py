"""What the Lua sandbox's budget guards cost (issue 16.6), against the same Lua without them.

    .venv/bin/python bench/bench_lua_guards.py

Each line runs one Lua workload twice in the same process: in the health-script sandbox (count
hook, wrapped pattern functions, results read inside the budget) and in a bare LuaJIT
interpreter with the JIT off and no hook. The ratio is the guards' price; on the 2-core build
machine (shared, noisy) it was 2-4x for an interpreted loop (with a count hook set, LuaJIT's
interpreter takes its slower hook-checking dispatch on every instruction), 5-8x for short
pattern calls (about 0.5 µs each: the cost bound is worked out in interpreted Lua before
LuaJIT's C matcher runs, against 0.07 µs for the bare call), and 2-6x for a whole typical
script, the sandbox's per-run environment included (about 50-170 µs per script).
"""

from __future__ import annotations

from typing import Any

from lupa import luajit21

from _timing import per_call_us
from headway.health.lua_script import run_health_script

OBJ: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w", "generation": 3},
    "status": {
        "observedGeneration": 3,
        "lastScheduleTime": "2026-03-04T05:06:07Z",
        "conditions": [
            {"type": "Synced", "status": "True", "message": "Waiting for the provider"},
            {"type": "Ready", "status": "False", "message": "Provisioning in us-east-1"},
        ],
    },
}

TYPICAL = """
local hs = {status = "Progressing", message = "Waiting"}
local y, mo, d = string.match(obj.status.lastScheduleTime, "(%d+)-(%d+)-(%d+)T")
for _, condition in ipairs(obj.status.conditions) do
  if condition.type == "Ready" and condition.status == "False" then
    if string.find(condition.message, "^Provisioning") then
      hs.message = condition.message .. " since " .. y .. mo .. d
      return hs
    end
    hs.status = "Degraded"
  end
end
return hs
"""
LOOP = "local n = 0 for i = 1, 100000 do n = n + i % 7 end return {status = 'Healthy'}"
FINDS = """
local hits = 0
for i = 1, 2000 do
  if string.find("Waiting for the provider", "^Waiting") then hits = hits + 1 end
  if string.match("2026-03-04T05:06:07Z", "^(%d+)-") then hits = hits + 1 end
end
return {status = 'Healthy'}
"""
BUDGET_S = 0.5


def bare_runner() -> Any:
    runtime = luajit21.LuaRuntime(register_eval=False, register_builtins=False)
    runtime.execute("jit.off() jit.flush()")
    run = runtime.eval(
        "function(source, obj) local f = loadstring(source) "
        "setfenv(f, setmetatable({obj = obj}, {__index = _G})) return f() end"
    )
    return lambda source: run(source, runtime.table_from(OBJ, recursive=True))


def main() -> None:
    bare = bare_runner()
    workloads = (
        ("typical script", TYPICAL),
        ("100k-step loop", LOOP),
        ("4k short patterns", FINDS),
    )
    for name, script in workloads:
        bare_us = per_call_us(lambda s=script: bare(s), BUDGET_S)
        sandbox_us = per_call_us(
            lambda s=script: run_health_script(s, OBJ, open_libs=True), BUDGET_S
        )
        print(
            f"{name:18} bare {bare_us:9.1f}µs   sandboxed {sandbox_us:9.1f}µs"
            f"   sandboxed/bare {sandbox_us / bare_us:5.1f}x"
        )


if __name__ == "__main__":
    main()
