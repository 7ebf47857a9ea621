"""`headway demo`: the whole product in under three minutes, on this machine, from nothing.

A local Git repository holds a canary Rollout; the local runtime runs it as real processes
behind a real router; `headway serve` runs the controllers. Three releases are committed:
v1 (first deploy), v2 (good: every canary step to Healthy), v3 (fails 30% of its requests:
the analysis fails, the rollout aborts, and Headway commits the revert to Git). See
docs/demo.md.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

# The demo (the runtime, the engine, Git) loads when it runs, not for --help.

__all__ = ["register"]


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
    from headway.demo.launch import run_demo, stop_kept
    from headway.demo.run import DemoOptions

    console = Console(highlight=False)
    if stop:
        if directory is None:
            console.print("error: --stop needs --dir DIR (where the kept demo runs)")
            raise typer.Exit(2)
        raise typer.Exit(stop_kept(console, directory))
    temporary = directory is None
    root = Path(tempfile.mkdtemp(prefix="headway-demo-")) if directory is None else directory
    options = DemoOptions(root.resolve(), keep=keep, stage_timeout=stage_timeout)
    raise typer.Exit(run_demo(console, options, temporary=temporary))


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
