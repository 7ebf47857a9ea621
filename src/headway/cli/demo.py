"""`headway demo`: the whole product in under three minutes, on this machine, from nothing.

A local Git repository holds a canary Rollout; the local runtime runs it as real processes
behind a real router; `headway serve` runs the controllers. Three releases are committed:
v1 (first deploy), v2 (good: every canary step to Healthy), v3 (fails 30% of its requests:
the analysis fails, the rollout aborts, and Headway commits the revert to Git). See
docs/demo.md.
"""

from __future__ import annotations

import shutil
import signal
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from headway.cli.demo_layout import DemoLayout, DemoSetupError
from headway.cli.demo_processes import stop_runtime, stop_serve
from headway.cli.demo_run import DemoFailed, DemoOptions, DemoSession
from headway.cli.demo_summary import render_summary

__all__ = ["register"]


def cli_command() -> str:
    """How to run this program again from a shell: `headway` when it is on PATH, else the
    script that is running (`.venv/bin/headway` is not on PATH unless the venv is active)."""
    if shutil.which("headway"):
        return "headway"
    script = Path(sys.argv[0])
    if script.name == "headway" and script.is_file():
        return str(script.absolute())
    return f"{sys.executable} -m headway"


def _explore_hints(console: Console, root: Path) -> None:
    console.rule("Still running (--keep)")
    hw = cli_command()
    # No soft wrapping: a command broken over two lines cannot be pasted.
    console.print(f"cd {root}", soft_wrap=True)
    for command in (
        f"{hw} rollouts get web -n demo --watch   # steps, weights, analysis runs",
        f"{hw} get pods -n demo -o wide",
        f"{hw} describe rollout web -n demo       # conditions (GitConvergence) and Events",
        f"{hw} app get web",
        "git -C gitops log --stat                   # the release and revert commits",
        f"{hw} runtime status                     # Services, VirtualService address",
    ):
        console.print(f"  {command}", soft_wrap=True, highlight=False)
    console.print(f"Stop it with: {hw} demo --stop --dir {root}", soft_wrap=True, highlight=False)


def _stop_kept(console: Console, root: Path) -> None:
    layout = DemoLayout(root)
    if not layout.state.is_dir():
        console.print(f"error: no demo state in {root}")
        raise typer.Exit(1)
    stopped = stop_serve(layout)
    console.print("headway serve stopped" if stopped else "headway serve was not running")
    console.print(stop_runtime(layout))


def _drive(console: Console, session: DemoSession) -> int:
    """The stages in order; the exit code (0, 1 when a stage failed, 130 on Ctrl-C)."""
    try:
        session.setup()
        session.deploy_first()
        session.release_good("v2")
        session.release_bad("v3", stable_tag="v2")
        render_summary(console, session.finish())
        return 0
    except KeyboardInterrupt:
        console.print("\n[yellow]interrupted: stopping everything the demo started[/yellow]")
        session.options = replace(session.options, keep=False)
        return 130
    except (DemoFailed, DemoSetupError) as err:
        console.print(f"[red]demo stopped:[/red] {err}")
        if session.summary.releases:
            render_summary(console, session.finish())
        return 1


def _close(session: DemoSession) -> None:
    # A second Ctrl-C must not cut the clean-up short and leave processes behind.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        session.close()
    finally:
        signal.signal(signal.SIGINT, previous)


def _run(console: Console, options: DemoOptions, *, temporary: bool) -> int:
    session = DemoSession(options, console)
    code = _drive(console, session)
    _close(session)
    root, keep = session.options.root, session.options.keep
    if keep and code == 0:
        _explore_hints(console, root)
    elif keep and session.created:
        console.print(f"left running for a look; stop it with: headway demo --stop --dir {root}")
    elif temporary:
        shutil.rmtree(root, ignore_errors=True)
    elif session.created:
        console.print(f"files left in {root} (the Git repository is gitops/)")
    return code


def demo(
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            file_okay=False,
            help="An empty or new directory to run in (default: a temp dir).",
        ),
    ] = None,
    keep: Annotated[
        bool, typer.Option("--keep", help="Leave the runtime and controllers running after.")
    ] = False,
    stop: Annotated[
        bool, typer.Option("--stop", help="Stop a demo left running with --keep (needs --dir).")
    ] = False,
    stage_timeout: Annotated[
        float, typer.Option("--stage-timeout", help="Seconds each stage may take.")
    ] = 90.0,
) -> None:
    """Run the demo: deploy v1, a good v2 canary, a bad v3 aborted and reverted in Git."""
    console = Console(highlight=False)
    if stop:
        if directory is None:
            console.print("error: --stop needs --dir DIR (where the kept demo runs)")
            raise typer.Exit(2)
        _stop_kept(console, directory)
        return
    temporary = directory is None
    root = Path(tempfile.mkdtemp(prefix="headway-demo-")) if directory is None else directory
    options = DemoOptions(root.resolve(), keep=keep, stage_timeout=stage_timeout)
    raise typer.Exit(_run(console, options, temporary=temporary))


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
