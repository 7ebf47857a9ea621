"""A render that failed for a reason outside Git (a plugin whose backing service was down, a
chart dependency's repository unreachable) is tried again on the poll interval at the same
commit, as Argo CD's repo server tries a failed generation again; within the interval the
failure is reused (no tool run per refresh), and a render that succeeded is never re-run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_harness import Remote, application

from headway.clock import VirtualClock
from headway.controllers.app.sources import DEFAULT_POLL_SECONDS, DesiredState, SourceReader
from headway.model.application import parse_application
from headway.model.yamlload import Document
from headway.source.git import GitCache
from headway.source.plugins import Command, Discover, PluginCatalog, PluginConfig
from system_programs import require_program

_CM = "apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: out\\n"


def _plugin(sh: str, flag: Path, runs: Path) -> PluginConfig:
    """Prints a ConfigMap while `flag` exists, fails otherwise; appends a line to `runs`
    at each run."""
    script = f'echo run >> "{runs}"; test -e "{flag}" || exit 3; printf "{_CM}"'
    return PluginConfig(
        name="backed",
        version="",
        init=Command(),
        generate=Command((sh, "-c", script)),
        discover=Discover(),
        preserve_file_mode=False,
        file="test",
    )


def _desired(reader: SourceReader, raw: dict[str, Any]) -> DesiredState:
    parsed, _ = parse_application(Document(raw, "test", 0, 0))
    assert parsed is not None
    return reader.desired(parsed, raw)


def _runs(runs: Path) -> int:
    return len(runs.read_text().splitlines()) if runs.exists() else 0


def test_a_failed_plugin_render_is_tried_again_on_the_poll_interval(tmp_path: Path) -> None:
    """Before: the failed render was kept under its fingerprint until a commit or a hard
    refresh, so an app whose plugin failed once stayed failed with the plugin healthy."""
    sh = require_program("sh")
    flag, runs = tmp_path / "service-up", tmp_path / "runs"
    remote = Remote(tmp_path / "remote.git")
    remote.commit({"apps/web/README": "generated\n"})
    clock = VirtualClock()
    catalog = PluginCatalog((_plugin(sh, flag, runs),))
    reader = SourceReader(git=GitCache(tmp_path / "cache"), clock=clock, plugins=catalog)
    raw = application("web", remote.url, path="apps/web")
    raw["spec"]["source"]["plugin"] = {"name": "backed"}

    failed = _desired(reader, raw)
    assert failed.errors and "exited with 3" in failed.errors[0]
    flag.touch()  # the plugin's service is back
    clock.advance(DEFAULT_POLL_SECONDS - 1)
    assert _desired(reader, raw).errors == failed.errors  # kept within the interval
    assert _runs(runs) == 1

    clock.advance(1)
    state = _desired(reader, raw)
    assert not state.errors
    assert [o["metadata"]["name"] for o in state.objects] == ["out"]
    assert state.revisions == failed.revisions
    assert _runs(runs) == 2

    clock.advance(10 * DEFAULT_POLL_SECONDS)
    assert not _desired(reader, raw).errors
    assert _runs(runs) == 2  # a render that worked is kept
