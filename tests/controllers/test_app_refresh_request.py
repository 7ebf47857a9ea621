"""`headway app get --refresh / --hard-refresh`: the controller honours Argo CD's
`argocd.argoproj.io/refresh` annotation, removes it, and the CLI shows what it computed then."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_harness import Harness, application, config_map, make_harness, manifests
from typer.testing import CliRunner

from headway.cli import app as app_cli
from headway.cli.main import _register_all, app
from headway.clock import VirtualClock
from headway.controllers.app.refresh import REFRESH_ANNOTATION
from headway.source import render as render_module
from headway.source.render_directory import DirectoryRenderer

_register_all()
runner = CliRunner()


def cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["app", *args, "--state-dir", str(tmp_path / "state")])
    return result.exit_code, result.output


def new_commit_unseen(tmp_path: Path, clock: VirtualClock) -> tuple[Harness, str]:
    """An app compared at the first commit, and a second commit the controller has not
    fetched: its poll interval has not passed."""
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app"))
    h.step("shop")
    first = h.status("shop")["sync"]["revision"]
    second = h.remote.commit({"app/all.yaml": manifests(config_map("a"), config_map("b"))})
    clock.advance(5)
    h.step("shop")
    assert h.status("shop")["sync"]["revision"] == first  # not fetched yet
    return h, second


def controller_steps_while_cli_waits(
    h: Harness, monkeypatch: pytest.MonkeyPatch, clock: VirtualClock
) -> None:
    def pause(seconds: float) -> None:
        clock.advance(seconds)
        h.step("shop")

    monkeypatch.setattr(app_cli.time, "sleep", pause)
    monkeypatch.setattr(app_cli.time, "monotonic", clock.monotonic)


def test_refresh_reads_git_now_and_get_shows_the_new_revision(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    h, second = new_commit_unseen(tmp_path, clock)
    controller_steps_while_cli_waits(h, monkeypatch, clock)
    code, out = cli(tmp_path, "get", "shop", "--refresh")
    assert code == 0, out
    assert h.status("shop")["sync"]["revision"] == second
    assert second[:12] in out or second in out
    assert REFRESH_ANNOTATION not in (h.app("shop")["metadata"].get("annotations") or {})


def count_renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every real render (by a renderer, not answered from a cache), by renderer name."""
    rendered: list[str] = []
    choose = render_module.choose_renderer

    class Counting:
        def __init__(self, request: Any) -> None:
            self.inner = choose(request)
            self.name = self.inner.name

        def inputs(self, request: Any) -> Any:
            return self.inner.inputs(request)

        def render(self, request: Any) -> Any:
            rendered.append(self.name)
            return self.inner.render(request)

    monkeypatch.setattr(render_module, "choose_renderer", Counting)
    return rendered


def test_hard_refresh_renders_and_compares_without_caches(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered = count_renders(monkeypatch)
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app"))
    h.step("shop")
    renders, comparisons = h.reader.render_cache.misses, h.controller.comparisons.misses
    h.step("shop")  # nothing changed: everything from caches
    assert (h.reader.render_cache.misses, h.controller.comparisons.misses) == (
        renders, comparisons)
    hits = h.reader.render_cache.hits
    h.store.apply(
        {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
         "metadata": {"name": "shop", "namespace": "argocd",
                      "annotations": {REFRESH_ANNOTATION: "hard"}}},
        field_manager="headway-cli-refresh",
    )
    before = len(rendered)
    h.step("shop")
    assert len(rendered) == before + 1  # rendered again by the renderer
    assert h.reader.render_cache.hits == hits  # not answered by the shared cache
    assert h.controller.comparisons.misses == comparisons + 1
    assert REFRESH_ANNOTATION not in (h.app("shop")["metadata"].get("annotations") or {})
    h.step("shop")  # and afterwards caches serve again
    assert h.controller.comparisons.misses == comparisons + 1
    assert len(rendered) == before + 1


def test_get_says_when_no_controller_takes_the_refresh(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    h, _ = new_commit_unseen(tmp_path, clock)
    monkeypatch.setattr(app_cli.time, "sleep", clock.advance)  # nobody steps the controller
    monkeypatch.setattr(app_cli.time, "monotonic", clock.monotonic)
    code, out = cli(tmp_path, "get", "shop", "--hard-refresh")
    assert code == 0
    assert "warning: the refresh was not taken within 30s" in out
    assert h.app("shop")["metadata"]["annotations"][REFRESH_ANNOTATION] == "hard"


def test_diff_hard_refresh_asks_the_controller_too(tmp_path: Path, clock: VirtualClock) -> None:
    h, _ = new_commit_unseen(tmp_path, clock)
    code, out = cli(tmp_path, "diff", "shop", "--hard-refresh")
    assert code == 1 and "ConfigMap demo/b" in out  # rendered by the CLI from the new commit
    assert h.app("shop")["metadata"]["annotations"][REFRESH_ANNOTATION] == "hard"


def test_a_changed_app_looks_its_renderer_and_inputs_up_once(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The render's identity (`SourceReader._fingerprint`) and the render cache's key both
    need the renderer and the content ids it reads; a commit's changed app looked both up
    twice (choosing the renderer walks the path's tree, the inputs walk it again)."""
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app"))
    h.step("shop")
    looked_up: list[str] = []
    source_type, inputs = render_module.source_type, DirectoryRenderer.inputs

    def counted_type(request: Any) -> str:
        looked_up.append("renderer")
        return source_type(request)

    def counted_inputs(self: DirectoryRenderer, request: Any) -> tuple[str, ...]:
        looked_up.append("inputs")
        return inputs(self, request)

    monkeypatch.setattr(render_module, "source_type", counted_type)
    monkeypatch.setattr(DirectoryRenderer, "inputs", counted_inputs)
    second = h.remote.commit({"app/all.yaml": manifests(config_map("a"), config_map("b"))})
    misses = h.reader.render_cache.misses
    clock.advance(300)
    h.step("shop")
    assert h.status("shop")["sync"]["revision"] == second
    assert h.reader.render_cache.misses == misses + 1  # rendered at the new commit
    assert looked_up == ["renderer", "inputs"]
