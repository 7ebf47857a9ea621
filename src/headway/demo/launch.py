"""Running the demo from start to end and stopping a kept one: what `headway demo` calls.

The stages themselves are in `run`; this module owns the exit code, Ctrl-C, clean-up, the
temporary directory and the hints printed for a demo left running with `--keep`.
"""

from __future__ import annotations

import shutil
import signal
import sys
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.text import Text

from headway.demo.layout import DemoLayout, DemoSetupError
from headway.demo.processes import stop_runtime, stop_serve
from headway.demo.run import DemoFailed, DemoOptions, DemoSession
from headway.demo.summary import render_summary

__all__ = ["cli_command", "explore_hints", "run_demo", "stop_kept"]


def cli_command() -> str:
    """How to run this program again from a shell: `headway` when it is on PATH, else the
    script that is running (`.venv/bin/headway` is not on PATH unless the venv is active)."""
    if shutil.which("headway"):
        return "headway"
    script = Path(sys.argv[0])
    if script.name == "headway" and script.is_file():
        return str(script.absolute())
    return f"{sys.executable} -m headway"


def explore_hints(console: Console, root: Path, dashboard: str = "") -> None:
    console.rule("Still running (--keep)")
    hw = cli_command()
    if dashboard:
        console.print(
            f"Dashboard: {dashboard}rollouts/demo/web  (the steps, the weights, and v3's "
            "analysis failing on its chart)", soft_wrap=True, highlight=False,
        )
    # No soft wrapping: a command broken over two lines cannot be pasted.
    console.print(f"cd {root}", soft_wrap=True, markup=False)
    for command in (
        f"{hw} rollouts get web -n demo --watch   # steps, weights, analysis runs",
        f"{hw} get pods -n demo -o wide",
        f"{hw} describe rollout web -n demo       # conditions (GitConvergence) and Events",
        f"{hw} app get web",
        "git -C gitops log --stat                   # the release and revert commits",
        f"{hw} runtime status                     # Services, VirtualService address",
    ):
        console.print(f"  {command}", soft_wrap=True, highlight=False, markup=False)
    stop = f"Stop it with: {hw} demo --stop --dir {root}"
    console.print(stop, soft_wrap=True, highlight=False, markup=False)


def stop_kept(console: Console, root: Path) -> int:
    layout = DemoLayout(root)
    if not layout.state.is_dir():
        console.print(f"error: no demo state in {root}", markup=False)
        return 1
    stopped = stop_serve(layout)
    console.print("headway serve stopped" if stopped else "headway serve was not running")
    console.print(stop_runtime(layout))
    return 0


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
        console.print(Text.assemble(("demo stopped:", "red"), f" {err}"))
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


def run_demo(console: Console, options: DemoOptions, *, temporary: bool) -> int:
    """Run every stage, clean up (unless kept), say how to explore a kept demo; the exit code.
    A `temporary` directory is removed afterwards unless the demo is kept."""
    session = DemoSession(options, console)
    code = _drive(console, session)
    _close(session)
    root, keep = session.options.root, session.options.keep
    if keep and code == 0:
        address = session.dashboard
        explore_hints(console, root, address.url if address else "")
    elif keep and session.created:
        console.print(
            f"left running for a look; stop it with: headway demo --stop --dir {root}", markup=False
        )
    elif temporary:
        shutil.rmtree(root, ignore_errors=True)
    elif session.created:
        console.print(f"files left in {root} (the Git repository is gitops/)", markup=False)
    return code
