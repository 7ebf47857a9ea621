"""Problems a UX review found in `headway app` and `headway serve --apps`: each is a clear
message and the right exit code, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from app_harness import (
    APPS_NS,
    Harness,
    application,
    config_map,
    hook_job,
    make_harness,
    manifests,
    message,
    phase,
)
from typer.testing import CliRunner

from headway.cli.app_view import describe_state
from headway.cli.app_wait import NO_CONTROLLER, Waited, operation_identity, wait
from headway.cli.main import _register_all, app
from headway.clock import VirtualClock
from headway.controllers.app.controller import APP_API_VERSION
from headway.controllers.app.definitions import DefinitionsWatcher, load_definitions
from headway.controllers.app.operations import CONFIRM_PRUNE_ANNOTATION

_register_all()
runner = CliRunner()


def _apps_dir_with_one_good_app(tmp_path: Path, clock: VirtualClock) -> tuple[Harness, Path]:
    """A harness and an --apps directory whose `good.yaml` defines the Application `shop`."""
    h = make_harness(tmp_path, clock, {"app/a.yaml": manifests(config_map("a"))})
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / "good.yaml").write_text(manifests(application("shop", h.remote.url, path="app")))
    return h, apps


def test_a_non_utf8_definitions_file_is_named_with_its_line_and_the_rest_publish(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h, apps = _apps_dir_with_one_good_app(tmp_path, clock)
    (apps / "latin1.yaml").write_bytes(b"kind: Application\nmetadata:\n  name: caf\xe9\n")
    problems = DefinitionsWatcher(apps).sync(h.store)
    assert problems == [
        f"{apps / 'latin1.yaml'}:3: not UTF-8 text (byte 0xe9 at offset 39)",
    ]
    assert h.store.get(APP_API_VERSION, "Application", "shop", APPS_NS)


def test_a_definitions_file_holding_a_yaml_list_is_an_error_with_its_line(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h, apps = _apps_dir_with_one_good_app(tmp_path, clock)
    listed = [application("cart", h.remote.url, path="app")]
    (apps / "listed.yaml").write_text("# one app\n" + yaml.safe_dump(listed))
    problems = DefinitionsWatcher(apps).sync(h.store)
    assert len(problems) == 1
    assert problems[0].startswith(f"{apps / 'listed.yaml'}:2: expected one Application")
    assert "found a list" in problems[0]
    assert h.store.get(APP_API_VERSION, "Application", "shop", APPS_NS)
    assert not h.store.list(APP_API_VERSION, "Application", namespace=APPS_NS)[1:]


def test_a_missing_apps_path_is_reported_without_a_line_zero(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    problems = [str(d) for d in load_definitions(missing).diagnostics]
    assert problems == [f"{missing}: no such file or directory"]


def _cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["app", *args, "--state-dir", str(tmp_path / "state")])
    return result.exit_code, result.output


def _unboxed(out: str) -> str:
    """The usage error's words without the frame rich draws around them."""
    return re.sub(r"[\s│╭╮╰╯─]+", " ", out)


def _names_option_and_bound(out: str, option: str, bound: str) -> bool:
    """A usage error that names the option and the lowest value it takes (in whichever
    words the CLI library puts it: Headway's meaning, not one Typer version's sentence)."""
    text = _unboxed(out)
    return (
        f"'{option}'" in text
        and re.search(rf"(?<![\d.-]){re.escape(bound)}(?!\d)", text) is not None
    )


def test_confirm_prune_refuses_when_nothing_waits_and_approves_a_waiting_prune(
    tmp_path: Path, clock: VirtualClock
) -> None:
    guarded = config_map("guarded", **{"argocd.argoproj.io/sync-options": "Prune=confirm"})
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"), guarded)})
    h.install(application("shop", h.remote.url, path="app", automated={"prune": True}))
    h.run("shop", lambda s: phase(s) == "Succeeded")
    code, out = _cli(tmp_path, "confirm-prune", "shop")
    assert (code, out.strip()) == (1, "error: nothing on shop is waiting for confirmation")
    assert CONFIRM_PRUNE_ANNOTATION not in (h.app("shop")["metadata"].get("annotations") or {})
    h.remote.commit({"app/all.yaml": manifests(config_map("a"))})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    h.run("shop", lambda s: "pruning confirmation" in message(s))
    code, out = _cli(tmp_path, "confirm-prune", "shop")
    assert (code, out.strip()) == (
        0,
        "confirmed for shop: Waiting for pruning confirmation of v1/ConfigMap/guarded",
    )
    h.run("shop", lambda s: phase(s) == "Succeeded")
    assert not h.exists("ConfigMap", "guarded")


def test_sync_rejects_a_retry_limit_below_minus_one_and_a_negative_timeout(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app"))
    code, out = _cli(tmp_path, "sync", "shop", "--retry-limit", "-3")
    assert code == 2
    assert _names_option_and_bound(out, "--retry-limit", "-1")
    code, out = _cli(tmp_path, "sync", "shop", "--wait", "--timeout", "-1")
    assert code == 2
    assert _names_option_and_bound(out, "--timeout", "0")
    assert "operation" not in h.app("shop")
    code, _ = _cli(tmp_path, "sync", "shop", "--retry-limit", "-1")
    assert code == 0 and h.app("shop")["operation"]["retry"] == {"limit": -1}


def test_every_app_command_takes_app_namespace_and_list_filters_by_it(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app"))
    h.install({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    other = application("billing", h.remote.url, path="app")
    other["metadata"]["namespace"] = "team"
    h.install(other)
    code, out = _cli(tmp_path, "list")
    assert code == 0 and out.splitlines()[1].split()[:2] == ["billing", "team"]
    assert out.splitlines()[2].split()[:2] == ["shop", "argocd"]
    code, out = _cli(tmp_path, "list", "--app-namespace", "team")
    assert code == 0 and "billing" in out and "shop" not in out
    code, out = _cli(tmp_path, "list", "-N", "argocd")
    assert code == 0 and "shop" in out and "billing" not in out
    code, out = _cli(tmp_path, "get", "billing", "-N", "team")
    assert code == 0 and "Name:         billing" in out
    commands = ["list", "get", "diff", "sync", "history", "rollback", "terminate"]
    for command in [*commands, "confirm-prune"]:
        result = runner.invoke(app, ["app", command, "--help"], env={"COLUMNS": "200"})
        assert "--app-namespace" in result.output and "-N" in result.output, command


def test_a_second_sync_is_refused_while_one_is_pending_and_get_shows_the_pending_one(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app"))
    _cli(tmp_path, "sync", "shop")
    h.run("shop", lambda s: phase(s) == "Succeeded")
    code, _ = _cli(tmp_path, "sync", "shop", "--prune", "--revision", "abc1234")
    assert code == 0
    code, out = _cli(tmp_path, "sync", "shop", "--dry-run")
    assert code == 1
    assert out.strip() == (
        "error: shop already has a requested operation the controller has not started:"
        " sync to abc1234 (prune) by headway-cli; wait for it, or withdraw it with"
        " `headway app terminate shop`"
    )
    assert h.app("shop")["operation"]["sync"] == {"prune": True, "revision": "abc1234"}
    code, out = _cli(tmp_path, "get", "shop")
    assert "Requested:    sync to abc1234 (prune) by headway-cli (waiting for the controller" in out
    assert "Last Result:  Succeeded" in out
    code, out = _cli(tmp_path, "terminate", "shop")
    assert (code, out.strip()) == (
        0,
        "requested operation on shop withdrawn: sync to abc1234 (prune) by headway-cli",
    )
    assert "operation" not in h.app("shop")
    code, _ = _cli(tmp_path, "sync", "shop", "--dry-run")
    assert code == 0 and h.app("shop")["operation"]["sync"]["dryRun"] is True


def _requested(tmp_path: Path, h: Harness, *args: str) -> tuple[object, object]:
    """Request a sync through the CLI; the identity of the operation state before it."""
    before = operation_identity(h.app("shop"))
    code, _ = _cli(tmp_path, "sync", "shop", *args)
    assert code == 0
    return before


def test_wait_without_a_controller_says_nobody_picked_it_up_and_exits_1(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app"))
    before = _requested(tmp_path, h)
    lines: list[str] = []
    waited = wait(
        lambda: h.app("shop"),
        previous=before,
        timeout=30,
        monotonic=clock.monotonic,
        pause=clock.advance,
        progress=lines.append,
    )
    assert waited == Waited(1, f"the operation did not start within 30s: {NO_CONTROLLER}", True)
    assert lines == [f"still waiting after 10s: {NO_CONTROLLER}"]
    code, out = _cli(tmp_path, "terminate", "shop")
    assert code == 0 and "withdrawn" in out
    code, out = _cli(tmp_path, "sync", "shop", "--wait", "--timeout", "0.01")
    assert code == 1 and out.strip().endswith(NO_CONTROLLER)
    assert "did not start within 0.01s" in out


def test_wait_shows_each_change_of_phase_and_message_until_the_end(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(hook_job("m", "PreSync"))})
    h.install(application("shop", h.remote.url, path="app"))
    h.step("shop")
    before = _requested(tmp_path, h)
    lines: list[str] = []

    def controller_runs(seconds: float) -> None:
        clock.advance(seconds)
        h.step("shop")

    waited = wait(
        lambda: h.app("shop"),
        previous=before,
        timeout=5,
        monotonic=clock.monotonic,
        pause=controller_runs,
        progress=lines.append,
    )
    # one line per change, not one per poll (the controller stepped 25 times)
    assert lines == [
        "Running: dry run of 1 tasks passed",
        "Running: PreSync wave 0: applied 1 tasks",
        "Running: PreSync wave 0 waiting: Job/m Progressing",
    ]
    assert waited == Waited(1, f"the operation did not finish within 5s (now {lines[-1]})", True)
    _cli(tmp_path, "terminate", "shop")
    h.run("shop", lambda s: phase(s) == "Failed")
    again = _requested(tmp_path, h, "--resource", "batch/Job/m")
    waited = wait(
        lambda: h.app("shop"),
        previous=again,
        timeout=0,
        monotonic=clock.monotonic,
        pause=controller_runs,
        progress=lines.append,
    )
    assert waited == Waited(0, "Succeeded: successfully synced (all tasks run)", False)
    assert lines[3:] == ["Running: dry run of 0 tasks passed"]
    assert waited.message == describe_state(h.status("shop")["operationState"])
