"""Issue 16.6: every health script ends within its budget, and one that does not fails alone.

Each script below escaped the old sandbox's instruction budget (the reported hangs of the
controller): loops in coroutines, pathological patterns matched in C, metamethods run after
the budget's hook was removed, and C calls doing far more work than instructions suggest.
"""

from __future__ import annotations

from typing import Any

import pytest

from headway.health import HealthRegistry, HealthResult, HealthStatus
from headway.health.lua_script import run_health_script
from headway.health.overrides import scripts_from_configmap

OBJ: dict[str, Any] = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
SPENT = HealthResult(HealthStatus.UNKNOWN, "health script error: health script exceeded its budget")
SMALL_BUDGET = 2_000_000

ESCAPES = {
    "loop in a coroutine": ("local f = coroutine.wrap(function() while true do end end) f()"),
    "new coroutines forever": (
        "while true do coroutine.resume(coroutine.create(function() while true do end end)) end"
    ),
    "a coroutine yielding forever": (
        "local co = coroutine.wrap(function() while true do coroutine.yield() end end) "
        "while true do co() end"
    ),
    "backtracking find": "string.find(string.rep('a', 3000), '.-.-.-.-.-.-b')",
    "backtracking gsub": "string.rep('a', 3000):gsub('.-.-.-.-.-b', 'x')",
    "backtracking gmatch": "for _ in string.gmatch(string.rep('a', 3000), '.-.-.-.-b') do end",
    "backtracking match in pcall": (
        "while true do pcall(string.match, string.rep('a', 2000), '(.-)(.-)(.-)(.-)b') end"
    ),
    "__eq looping": (
        "local m = {__eq = function() while true do end end} "
        "local _ = setmetatable({}, m) == setmetatable({}, m)"
    ),
    "sort comparator looping": (
        "local t = {} for i = 1, 100 do t[i] = i end "
        "table.sort(t, function() while true do end end)"
    ),
    "__concat looping": (
        "local _ = setmetatable({}, {__concat = function() while true do end end}) .. 'a'"
    ),
    "string.rep of huge sizes in a loop": "while true do local _ = string.rep('x', 3e7) end",
    "sorting millions": "local t = {} for i = 1, 3e6 do t[i] = -i end table.sort(t)",
    "os.date of a huge format in a loop": (
        "local f = ('%c'):rep(1e5) while true do local _ = os.date(f) end"
    ),
}


@pytest.mark.parametrize("script", ESCAPES.values(), ids=list(ESCAPES))
def test_script_that_escaped_the_budget_now_ends_unknown(script: str) -> None:
    assert run_health_script(script, OBJ, open_libs=True, budget=SMALL_BUDGET) == SPENT


def test_copying_tens_of_megabytes_per_instruction_is_stopped_by_the_cpu_backstop() -> None:
    # Four instructions per iteration, each copying 16 MiB: the instruction count alone
    # would allow hours of this.
    script = "local s = string.rep('x', 8e6) while true do local t = s .. s end"
    assert run_health_script(script, OBJ, open_libs=True) == SPENT


def test_error_value_with_a_looping_tostring_is_not_converted() -> None:
    script = "error(setmetatable({}, {__tostring = function() while true do end end}))"
    assert run_health_script(script, OBJ) == HealthResult(
        HealthStatus.UNKNOWN, "health script raised an error value of type table"
    )


def test_returned_table_is_read_without_its_metamethods() -> None:
    looping = "function() while true do end end"
    script = f"return setmetatable({{status = 'Degraded'}}, {{__index = {looping}}})"
    assert run_health_script(script, OBJ) == HealthResult(HealthStatus.DEGRADED, "")
    only_index = f"return setmetatable({{}}, {{__index = {looping}, __gc = {looping}}})"
    assert run_health_script(only_index, OBJ) is None  # raw read: an empty table, no verdict
    status = f"return {{status = setmetatable({{}}, {{__tostring = {looping}}})}}"
    assert run_health_script(status, OBJ) == HealthResult(
        HealthStatus.UNKNOWN, "health script returned a status that is not a string (table)"
    )


def test_a_runaway_script_fails_alone() -> None:
    data = {
        "resource.customizations.health.example.com_Widget": (
            "string.find(string.rep('a', 3000), '.-.-.-.-.-.-b')"
        ),
        "resource.customizations.useOpenLibs.example.com_Widget": "true",
        "resource.customizations.health.example.com_Gadget": (
            "return {status = 'Healthy', message = obj.metadata.name}"
        ),
    }
    registry = HealthRegistry().with_scripts(scripts_from_configmap(data).scripts)
    assert registry.assess(OBJ) == SPENT
    gadget = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    assert registry.assess(gadget) == HealthResult(HealthStatus.HEALTHY, "g")
    assert registry.assess({**OBJ, "kind": "Other"}) is None


def test_state_does_not_leak_from_a_spent_run_into_the_next() -> None:
    run_health_script("while true do end", OBJ, budget=SMALL_BUDGET)
    script = (
        "local n = 0 for i = 1, 1000 do n = n + i end "
        "return {status = 'Healthy', message = tostring(n)}"
    )
    assert run_health_script(script, OBJ, budget=SMALL_BUDGET) == HealthResult(
        HealthStatus.HEALTHY, "500500"
    )


def test_objects_that_lua_numbers_cannot_hold_are_converted_not_raised() -> None:
    obj = {"spec": {"huge": 10**25, "enormous": 10**400, "tags": {"a", "b"} and ["a"]}}
    script = (
        "return {status = 'Healthy', "
        "message = tostring(obj.spec.huge) .. ' ' .. tostring(obj.spec.enormous)}"
    )
    assert run_health_script(script, obj) == HealthResult(
        HealthStatus.HEALTHY, "1e+25 " + "1" + "0" * 400
    )
