"""Issue 19.1-19.3: what Argo CD's Lua health scripts may use and return, run unchanged."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.health import HealthRegistry, HealthResult, HealthStatus
from headway.health.lua_script import run_health_script
from headway.health.overrides import scripts_from_configmap, scripts_from_files

OBJ: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w", "generation": 2},
    "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced"}]},
}
NOW = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def test_goto_and_labels_compile_and_run() -> None:
    script = """
    local ready = 0
    for _, condition in ipairs(obj.status.conditions) do
      if condition.status ~= "True" then goto continue end
      ready = ready + 1
      ::continue::
    end
    return {status = "Healthy", message = ready .. " ready"}
    """
    assert run_health_script(script, OBJ) == HealthResult(HealthStatus.HEALTHY, "1 ready")


def test_lua_51_semantics_stay() -> None:
    # LuaJIT keeps 5.1's numbers, `#`, unpack and getn; 5.2+ integer division does not parse.
    script = "return {status = 'Healthy', message = tostring(7 / 2) .. select('#', unpack({1, 2}))}"
    assert run_health_script(script, OBJ) == HealthResult(HealthStatus.HEALTHY, "3.52")
    result = run_health_script("return {status = 'Healthy', message = tostring(7 // 2)}", OBJ)
    assert result is not None and result.status is HealthStatus.UNKNOWN


def test_os_time_and_date_use_the_given_now_in_utc() -> None:
    script = """
    local os = require("os")
    return {status = "Healthy",
            message = os.time() .. " " .. os.date("%Y-%m-%dT%H:%M:%S") .. " " ..
                      os.date("!%d/%m", 0) .. " " .. os.date("*t").hour}
    """
    result = run_health_script(script, OBJ, now=NOW)
    assert result == HealthResult(
        HealthStatus.HEALTHY, f"{int(NOW.timestamp())} 2026-03-04T05:06:07 01/01 5"
    )


def test_os_time_of_a_table_reads_a_utc_date_with_string_or_number_fields() -> None:
    script = """
    local y, mo, d, h, mi, s =
      string.match("2026-03-04T05:06:07Z", "(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)Z")
    local parsed = os.time({year = y, month = mo, day = d, hour = h, min = mi, sec = s})
    local noon = os.time({year = 2026, month = 3, day = 4})
    local rolled = os.time({year = 2025, month = 15, day = 4, hour = 12})
    return {status = "Healthy", message = parsed .. " " .. noon .. " " .. rolled}
    """
    result = run_health_script(script, OBJ, open_libs=True, now=NOW)
    noon = int(datetime(2026, 3, 4, 12, tzinfo=UTC).timestamp())
    assert result == HealthResult(HealthStatus.HEALTHY, f"{int(NOW.timestamp())} {noon} {noon}")


def test_nothing_else_of_os() -> None:
    script = """
    local names = {}
    for name in pairs(os) do names[#names + 1] = name end
    table.sort(names)
    return {status = 'Healthy', message = table.concat(names, ',')}
    """
    assert run_health_script(script, OBJ) == HealthResult(HealthStatus.HEALTHY, "date,time")


def test_registry_gives_scripts_its_clock() -> None:
    clock = VirtualClock(NOW)
    found = scripts_from_configmap(
        {
            "resource.customizations.health.example.com_Widget": (
                "return {status = 'Healthy', message = tostring(os.time())}"
            )
        }
    )
    registry = HealthRegistry().with_scripts(found.scripts).with_clock(clock)
    assert registry.assess(OBJ) == HealthResult(HealthStatus.HEALTHY, str(int(NOW.timestamp())))
    clock.advance(90)
    assert registry.assess(OBJ) == HealthResult(
        HealthStatus.HEALTHY, str(int(NOW.timestamp()) + 90)
    )


@pytest.mark.parametrize("script", ["return nil", "return", "local x = 1", "return {}"])
def test_no_verdict_falls_back_to_the_builtin_check(script: str) -> None:
    assert run_health_script(script, OBJ) is None
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"generation": 1},
        "spec": {"replicas": 1},
        "status": {
            "observedGeneration": 1,
            "replicas": 1,
            "updatedReplicas": 1,
            "availableReplicas": 1,
        },
    }
    found = scripts_from_configmap({"resource.customizations.health.apps_Deployment": script})
    registry = HealthRegistry().with_scripts(found.scripts)
    assert registry.assess(deployment) == HealthRegistry().assess(deployment)
    widget = scripts_from_configmap({"resource.customizations.health.example.com_Widget": script})
    assert HealthRegistry().with_scripts(widget.scripts).assess(OBJ) is None


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ("42", "expect table output from Lua script, not number"),
        ("'Healthy'", "expect table output from Lua script, not string"),
        (
            "{status = 'Healthy', message = 5}",
            "health script returned a message that is not a string (number)",
        ),
        (
            "{status = 'Healthy', message = {}}",
            "health script returned a message that is not a string (table)",
        ),
        ("{status = true}", "health script returned a status that is not a string (boolean)"),
        ("{message = 'no status'}", "Lua returned an invalid health status"),
    ],
)
def test_malformed_results_are_unknown_without_python_names(returned: str, message: str) -> None:
    assert run_health_script(f"return {returned}", OBJ) == HealthResult(
        HealthStatus.UNKNOWN, message
    )


def test_use_open_libs_per_kind_from_argocd_cm() -> None:
    script = "return {status = 'Healthy', message = string.upper(obj.metadata.name)}"
    data = {
        "resource.customizations.health.example.com_Widget": script,
        "resource.customizations.health.example.com_Gadget": script,
        "resource.customizations.useOpenLibs.example.com_Widget": "true",
        "resource.customizations.useOpenLibs.example.com_Gadget": "yes please",
    }
    found = scripts_from_configmap(data)
    assert found.scripts[("example.com", "Widget")].open_libs is True
    assert found.scripts[("example.com", "Gadget")].open_libs is False
    assert found.problems == (
        "argocd-cm: resource.customizations.useOpenLibs.example.com_Gadget: expected "
        '`resource.customizations.useOpenLibs.<group>_<kind>` with "true" or "false", '
        "got 'yes please'",
    )
    registry = HealthRegistry().with_scripts(found.scripts)
    assert registry.assess(OBJ) == HealthResult(HealthStatus.HEALTHY, "W")
    gadget = registry.assess({**OBJ, "kind": "Gadget"})
    assert gadget is not None and gadget.status is HealthStatus.UNKNOWN
    assert "global 'string'" in gadget.message


def test_use_open_libs_in_the_customizations_block_and_script_trees() -> None:
    block = "\n".join(
        [
            "example.com/Widget:",
            "  health.lua.useOpenLibs: true",
            "  health.lua: |",
            "    return {status = 'Healthy', message = string.rep('a', 2)}",
        ]
    )
    found = scripts_from_configmap({"resource.customizations": block})
    assert found.scripts[("example.com", "Widget")].open_libs is True
    tree = scripts_from_files({"example.com/Widget/health.lua": "return {}"})
    assert tree.scripts[("example.com", "Widget")].open_libs is True
