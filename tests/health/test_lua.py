"""Lua health overrides: Argo CD's contract, sandboxing, limits and where scripts come from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headway.health import HealthRegistry, HealthResult, HealthStatus
from headway.health.lua_script import run_health_script
from headway.health.overrides import (
    read_script_tree,
    scripts_from_configmap,
    scripts_from_files,
)

LUA_TREE = Path(__file__).parent / "lua"

CERT: dict[str, Any] = {
    "apiVersion": "cert-manager.io/v1",
    "kind": "Certificate",
    "metadata": {"name": "tls", "namespace": "shop"},
    "status": {"conditions": [{"type": "Ready", "status": "False", "message": "issuer down"}]},
}


def test_script_sees_obj_and_returns_status_and_message() -> None:
    script = 'return {status = "Degraded", message = obj.metadata.name .. "!"}'
    assert run_health_script(script, CERT) == HealthResult(HealthStatus.DEGRADED, "tls!")


def test_lists_are_one_based_lua_arrays() -> None:
    script = (
        "return {status = 'Healthy', "
        "message = obj.status.conditions[1].message .. #obj.status.conditions}"
    )
    assert run_health_script(script, CERT).message == "issuer down1"


def test_invalid_status_is_unknown() -> None:
    result = run_health_script('return {status = "Fine"}', CERT)
    assert result == HealthResult(HealthStatus.UNKNOWN, "Lua returned an invalid health status")


def test_non_table_result_is_unknown() -> None:
    assert run_health_script("return 42", CERT).status is HealthStatus.UNKNOWN


def test_runtime_error_is_unknown_with_the_lua_error() -> None:
    result = run_health_script("local x = obj.spec.missing.field", CERT)
    assert result.status is HealthStatus.UNKNOWN
    assert "attempt to index" in result.message


def test_syntax_error_is_unknown_with_position() -> None:
    result = run_health_script("return {status = }", CERT)
    assert result.status is HealthStatus.UNKNOWN
    assert "health.lua:1:" in result.message


@pytest.mark.parametrize(
    "expression",
    [
        "io",
        "debug",
        "package",
        "load",
        "loadstring",
        "loadfile",
        "dofile",
        "getfenv",
        "setfenv",
        "newproxy",
        "collectgarbage",
        "module",
        "python",
        "jit",
        "bit",
        "os.execute",
        "os.getenv",
        "os.exit",
        "os.remove",
        "string.dump",
    ],
)
def test_sandbox_removes_dangerous_libraries(expression: str) -> None:
    script = f"return {{status = 'Healthy', message = type({expression})}}"
    result = run_health_script(script, CERT, open_libs=True)
    assert result == HealthResult(HealthStatus.HEALTHY, "nil")


@pytest.mark.parametrize("module", ["io", "ffi", "debug", "jit", "table.new", "string.buffer"])
def test_require_gives_only_the_sandboxed_modules(module: str) -> None:
    result = run_health_script(f"local m = require('{module}')", CERT, open_libs=True)
    assert result == HealthResult(
        HealthStatus.UNKNOWN, f"health.lua:1: module '{module}' not found"
    )


def test_string_metatable_cannot_be_reached() -> None:
    script = "return {status = 'Healthy', message = tostring(getmetatable('x'))}"
    assert run_health_script(script, CERT, open_libs=True).message == "false"  # type: ignore[union-attr]


def test_standard_libraries_only_when_opened() -> None:
    script = (
        "local parts = {} table.insert(parts, string.upper('ok')) "
        "return {status = 'Healthy', message = table.concat(parts) .. math.max(1, 2) "
        ".. table.getn(obj.status.conditions) .. ('x'):rep(2)}"
    )
    assert run_health_script(script, CERT, open_libs=True).message == "OK21xx"  # type: ignore[union-attr]
    closed = run_health_script(script, CERT)
    assert closed is not None and closed.status is HealthStatus.UNKNOWN
    assert "string" in closed.message
    method = run_health_script("return {status = 'Healthy', message = ('x'):upper()}", CERT)
    assert method is not None and method.status is HealthStatus.UNKNOWN


def test_infinite_loop_is_stopped() -> None:
    result = run_health_script("while true do end", CERT)
    assert result == HealthResult(
        HealthStatus.UNKNOWN, "health script error: health script exceeded its budget"
    )


def test_loop_hidden_behind_pcall_is_still_stopped() -> None:
    script = "while true do pcall(function() while true do end end) end"
    result = run_health_script(script, CERT, budget=1_000_000)
    assert result == HealthResult(
        HealthStatus.UNKNOWN, "health script error: health script exceeded its budget"
    )


def test_memory_bomb_is_stopped() -> None:
    result = run_health_script('local s = "x" while true do s = s .. s end', CERT)
    assert result is not None and result.status is HealthStatus.UNKNOWN
    assert "not enough memory" in result.message


def test_globals_do_not_leak_between_runs() -> None:
    run_health_script("leaked = 'yes' return {status = 'Healthy'}", CERT)
    result = run_health_script("return {status = 'Healthy', message = tostring(leaked)}", CERT)
    assert result.message == "nil"


def test_configmap_keys_name_group_and_kind() -> None:
    data = {
        "resource.customizations.health.cert-manager.io_Certificate": "return {status='Healthy'}",
        "resource.customizations.health.PersistentVolumeClaim": "return {status='Healthy'}",
        "resource.customizations.health.broken_": "return {}",
        "url": "https://argocd.example.com",
    }
    found = scripts_from_configmap(data)
    assert set(found.scripts) == {("cert-manager.io", "Certificate"), ("", "PersistentVolumeClaim")}
    assert len(found.problems) == 1
    assert "resource.customizations.health.broken_" in found.problems[0]


def test_script_tree_and_registry_override_builtins() -> None:
    found = read_script_tree(LUA_TREE)
    assert set(found.scripts) == {
        ("cert-manager.io", "Certificate"),
        ("", "PersistentVolumeClaim"),
        ("apps", "Deployment"),
    }
    registry = HealthRegistry().with_scripts(found.scripts)
    cert = registry.assess(CERT)
    assert cert == HealthResult(HealthStatus.DEGRADED, "issuer down")
    pending_pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "d"},
        "status": {"phase": "Pending"},
    }
    assert registry.assess(pending_pvc) == HealthResult(
        HealthStatus.HEALTHY, "waiting for first consumer"
    )
    # The built-in would call this Deployment Progressing (generation not observed).
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"generation": 5},
        "spec": {"replicas": 2},
        "status": {"readyReplicas": 2},
    }
    assert registry.assess(deployment) == HealthResult(HealthStatus.HEALTHY, "2/2 ready")
    assert HealthRegistry().assess(deployment).status is HealthStatus.PROGRESSING  # type: ignore[union-attr]


def test_argocd_documented_application_override_runs_unchanged() -> None:
    # The app-of-apps script from Argo CD's health docs, in its usual global-variable style.
    script = "\n".join(
        [
            "hs = {}",
            'hs.status = "Progressing"',
            'hs.message = ""',
            "if obj.status ~= nil then",
            "  if obj.status.health ~= nil then",
            "    hs.status = obj.status.health.status",
            "    if obj.status.health.message ~= nil then",
            "      hs.message = obj.status.health.message",
            "    end",
            "  end",
            "end",
            "return hs",
        ]
    )
    found = scripts_from_configmap(
        {"resource.customizations.health.argoproj.io_Application": script}
    )
    registry = HealthRegistry().with_scripts(found.scripts)
    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "status": {"health": {"status": "Degraded", "message": "child broke"}},
    }
    assert registry.assess(app) == HealthResult(HealthStatus.DEGRADED, "child broke")


def test_files_in_wrong_places_are_reported() -> None:
    found = scripts_from_files({"a/b/c/health.lua": "return {}", "README.md": "x"}, root="custom")
    assert found.scripts == {}
    assert found.problems == ("custom/a/b/c/health.lua: expected <group>/<Kind>/health.lua",)


def test_customizations_block_with_wildcards() -> None:
    block = "\n".join(
        [
            '"*.aws.crossplane.io/*":',
            "  health.lua: |",
            '    return {status = "Healthy", message = "crossplane"}',
            "cert-manager.io/Certificate:",
            "  health.lua: |",
            '    return {status = "Suspended", message = "block"}',
            "apps/Deployment:",
            "  ignoreDifferences: |",
            "    jsonPointers: [/spec/replicas]",
        ]
    )
    data = {
        "resource.customizations": block,
        "resource.customizations.health.cert-manager.io_Certificate": (
            'return {status = "Degraded", message = "per-kind key wins"}'
        ),
    }
    found = scripts_from_configmap(data)
    assert found.problems == ()
    registry = HealthRegistry().with_scripts(found.scripts)
    bucket = {"apiVersion": "s3.aws.crossplane.io/v1beta1", "kind": "Bucket"}
    assert registry.assess(bucket) == HealthResult(HealthStatus.HEALTHY, "crossplane")
    assert registry.assess(CERT) == HealthResult(HealthStatus.DEGRADED, "per-kind key wins")
    other = {"apiVersion": "s3.gcp.crossplane.io/v1", "kind": "Bucket"}
    assert registry.assess(other) is None


def test_customizations_block_that_is_not_yaml_is_reported() -> None:
    found = scripts_from_configmap({"resource.customizations": "a: [unclosed"})
    assert found.scripts == {}
    assert found.problems[0].startswith("argocd-cm: resource.customizations: not valid YAML")
