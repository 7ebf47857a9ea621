"""The demo's closing summary: facts gathered during the run, rendered as rich tables.

Every number here was read from the real system: release outcomes and times from the Rollout
as the demo watched it, request counts from the mesh's metrics (and the traffic generator's
own tally), the revert commit from the Git repository, the final state from the store and
the branch tip.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table
from rich.text import Text

from headway.demo.observe import RevisionRequests
from headway.demo.repo import GitCommit

__all__ = ["DemoSummary", "FinalState", "ReleaseOutcome", "render_summary"]


@dataclass(frozen=True)
class ReleaseOutcome:
    tag: str
    commit: str
    outcome: str  # "Healthy", "Aborted", "did not finish", ...
    seconds: float
    pod_hash: str = ""
    detail: str = ""


@dataclass(frozen=True)
class FinalState:
    rollout_phase: str
    live_image: str
    git_image: str
    stable_hash: str
    app_sync: str = ""
    app_health: str = ""

    @property
    def agrees(self) -> bool:
        """Git, the live spec and the status tell the same story."""
        same_image = self.live_image == self.git_image
        synced = self.app_sync in ("", "Synced")
        return self.rollout_phase == "Healthy" and same_image and synced


@dataclass(frozen=True)
class DemoSummary:
    releases: tuple[ReleaseOutcome, ...] = ()
    bad_tag: str = ""
    bad_commit_to_abort: float | None = None
    bad_requests: RevisionRequests | None = None  # as the mesh counted them
    bad_client_served: int = 0  # as the traffic generator saw them
    bad_client_failed: int = 0
    revert: GitCommit | None = None
    final: FinalState | None = None
    elapsed: float = 0.0
    missing: tuple[str, ...] = field(default_factory=tuple)


def _releases_table(summary: DemoSummary) -> Table:
    table = Table(title="Releases", title_justify="left")
    for column in ("release", "commit", "outcome", "time", "detail"):
        table.add_column(column)
    for release in summary.releases:
        style = "green" if release.outcome == "Healthy" else "red"
        table.add_row(
            release.tag,
            release.commit[:12],
            f"[{style}]{release.outcome}[/{style}]",
            f"{release.seconds:.1f}s",
            release.detail,
        )
    return table


def _facts_table(summary: DemoSummary) -> Table:
    table = Table(title="What happened to the bad release", title_justify="left", show_header=False)
    table.add_column("fact")
    table.add_column("value")
    if summary.bad_commit_to_abort is not None:
        table.add_row("bad commit -> abort", f"{summary.bad_commit_to_abort:.1f}s")
    if summary.bad_requests is not None:
        counted = summary.bad_requests
        table.add_row(
            f"requests {summary.bad_tag} served (mesh)",
            f"{counted.requests}, of which {counted.errors} failed (5xx)",
        )
    table.add_row(
        f"requests {summary.bad_tag} answered (traffic generator)",
        f"{summary.bad_client_served}, of which {summary.bad_client_failed} failed",
    )
    if summary.revert is not None:
        table.add_row("revert commit", f"{summary.revert.short}  {summary.revert.subject}")
    return table


def _final_table(final: FinalState) -> Table:
    table = Table(title="Final state", title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value")
    table.add_row("Rollout", f"{final.rollout_phase}, running {final.live_image}")
    table.add_row("Git (main)", final.git_image)
    if final.app_sync or final.app_health:
        table.add_row("Application", f"{final.app_sync} / {final.app_health}")
    verdict = "[green]agree[/green]" if final.agrees else "[red]disagree[/red]"
    table.add_row("Git, live state and status", verdict)
    return table


def render_summary(console: Console, summary: DemoSummary) -> None:
    console.rule("Summary")
    console.print(_releases_table(summary))
    if summary.bad_tag:
        console.print(_facts_table(summary))
    if summary.final is not None:
        console.print(_final_table(summary.final))
    for note in summary.missing:
        console.print(Text.assemble(("not shown:", "yellow"), f" {note}"))
    console.print(f"demo took {summary.elapsed:.0f}s")
