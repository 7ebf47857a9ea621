"""The demo from start to end: set up, deploy v1, release v2 (good) and v3 (bad), summarise.

Each stage waits on the real system (the store the runtime and controllers write, the Git
repository) with a deadline, narrating what changed; nothing is simulated. A stage whose
deadline passes ends the demo with what was seen and where to look, never a made-up result.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx2
import yaml
from rich.console import Console
from rich.text import Text

from headway.clock import SystemClock
from headway.cluster.errors import NotFound
from headway.cluster.local.api.store import LocalCluster
from headway.cluster.local.runtime import RuntimePaths
from headway.demo.dashboard import DashboardAddress, announced_dashboard, free_port
from headway.demo.layout import DemoLayout, DemoSetupError, examples_dir
from headway.demo.observe import (
    RevisionRequests,
    RolloutView,
    narrate,
    revision_requests,
    rollout_view,
    run_views,
)
from headway.demo.processes import (
    metrics_address,
    serve_controllers,
    start_runtime,
    start_serve,
    stop_runtime,
    stop_serve,
)
from headway.demo.repo import DemoRepo
from headway.demo.summary import DemoSummary, FinalState, ReleaseOutcome
from headway.demo.traffic import TrafficCounts, TrafficGenerator, traffic_since
from headway.demo.waiting import WaitTimedOut, wait_until
from headway.demo.webhook import DEMO_TRIGGERS, DemoWebhook
from headway.engine import ALL_LOOPS, controller_names

__all__ = ["DemoFailed", "DemoOptions", "DemoSession"]

API = "argoproj.io/v1alpha1"
NAMESPACE = "demo"
ROLLOUT = "web"
VERSIONS = frozenset({"v1", "v2", "v3"})
REQUIRED_CONTROLLERS = controller_names(ALL_LOOPS)


class DemoFailed(Exception):
    """A stage did not complete; the message says what was seen and where to look."""


@dataclass(frozen=True)
class DemoOptions:
    root: Path
    keep: bool = False
    stage_timeout: float = 90.0
    traffic_rate: float = 40.0


class DemoSession:
    def __init__(self, options: DemoOptions, console: Console) -> None:
        self.options = options
        self.layout = DemoLayout(options.root)
        self.console = console
        self.started = time.monotonic()
        self.summary = DemoSummary()
        self.repo: DemoRepo | None = None
        self.cluster: LocalCluster | None = None
        self.traffic: TrafficGenerator | None = None
        self.metrics = ""
        self.dashboard: DashboardAddress | None = None
        self._last: RolloutView | None = None
        self._done_runs: set[str] = set()
        self._traffic_seen: TrafficCounts | None = None
        self.created = False  # whether anything of ours is in the directory
        self.webhook: DemoWebhook | None = None

    # -- narration ----------------------------------------------------------------------------

    def say(self, text: str, style: str = "") -> None:
        """Narrate `text` (printed as written, never read as Rich markup: it holds paths,
        shas and messages) behind the seconds since the demo started."""
        stamp = f"{time.monotonic() - self.started:6.1f}s"
        self.console.print(Text.assemble((stamp, "dim"), " ", (text, style)))

    def stage(self, title: str) -> None:
        self.console.rule(f"[bold]{title}")

    # -- set-up -------------------------------------------------------------------------------

    def setup(self) -> None:
        examples = examples_dir()
        self.layout.check_unused()
        self.created = True
        self.layout.install_files(examples)
        self.stage("Setting up")
        start_runtime(self.layout)
        self.metrics = metrics_address(self.layout)
        if not self.metrics:
            raise DemoSetupError("the runtime reported no mesh metrics address (runtime.json)")
        self.say(f"local runtime up (state {self.layout.state}); mesh metrics at {self.metrics}")
        files = self.layout.repo_files(examples, self.metrics)
        self.repo = DemoRepo.create(self.layout.repo, files, "Release web v1")
        self.say(f"Git repository {self.layout.repo} (main at {self.repo.tip().short}: v1)")
        self.layout.application.write_text(self.layout.application_text(examples))
        self.cluster = LocalCluster(RuntimePaths(self.layout.state).db, SystemClock())
        self._install_application()
        self.webhook = DemoWebhook()
        self.webhook.install(self.cluster)
        self.say(f"webhook receiver at {self.webhook.url} (notifications service `demo`)")
        pid = start_serve(self.layout, "--ui-port", str(free_port()))
        names = serve_controllers(self.layout, pid)
        missing = [n for n in REQUIRED_CONTROLLERS if n not in names]
        if missing:
            raise DemoSetupError(f"`headway serve` runs no {', '.join(missing)} controller")
        self.say(f"controllers running (headway serve, pid {pid}): {', '.join(names)}")
        self.dashboard = announced_dashboard(self.layout)
        if self.dashboard is not None:
            self.say(f"dashboard at {self.dashboard.url} (actions: log in with the token "
                     f"{self.dashboard.token or 'serve printed in its log'})")

    def _install_application(self) -> None:
        assert self.cluster is not None
        for name in ("argocd", NAMESPACE):
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            self.cluster.apply(namespace, field_manager="headway-demo")
        for document in yaml.safe_load_all(self.layout.application.read_text()):
            self.cluster.apply(document, field_manager="headway-demo")  # AppProject, then app
        self.say("Application web installed: automated sync of apps/web from main")

    # -- watching -----------------------------------------------------------------------------

    def view(self) -> RolloutView | None:
        """The Rollout now, with the AnalysisRuns of its current revision; runs already
        reported finished for an earlier visit of that revision are left out."""
        if self.cluster is None:
            return None
        try:
            rollout = self.cluster.get(API, "Rollout", ROLLOUT, NAMESPACE)
        except NotFound:
            return None
        runs = self.cluster.list(API, "AnalysisRun", namespace=NAMESPACE)
        pod_hash = str((rollout.get("status") or {}).get("currentPodHash") or "")
        shown = {r.name for r in self._last.runs} if self._last else set()
        fresh = [
            r for r in run_views(runs, pod_hash) if r.name in shown or r.name not in self._done_runs
        ]
        for run in fresh:
            if run.phase not in ("Pending", "Running", ""):
                self._done_runs.add(run.name)
        return rollout_view(rollout, fresh)

    def narrate_change(self, current: RolloutView | None) -> None:
        """Say what changed since the last look (steps, weights, analysis, the abort) and,
        at a step or the abort, the traffic each version answered since the previous one."""
        if current is None:
            return
        lines = narrate(self._last, current)
        for line in lines:
            self.say(line, "red" if "ABORTED" in line or "Failed" in line else "")
        if any(line.startswith(("step", "all", "ABORTED")) for line in lines):
            self._say_traffic()
        self._last = current

    def watch(self, until: Callable[[RolloutView], bool], *, what: str) -> RolloutView:
        """Narrate the Rollout until `until` holds; DemoFailed after the stage timeout."""
        try:
            seen = wait_until(
                self.view,
                lambda current: current is not None and until(current),
                timeout=self.options.stage_timeout,
                what=what,
                progress=self.narrate_change,
            )
        except WaitTimedOut as err:
            last: RolloutView | None = err.last
            said = f"phase {last.phase}: {last.message}" if last else "no Rollout yet"
            raise DemoFailed(
                f"{what} did not happen within {self.options.stage_timeout:.0f}s "
                f"(last seen: {said}); logs: {self.layout.serve_log}, "
                f"{RuntimePaths(self.layout.state).log}"
            ) from None
        assert seen is not None  # `done` holds only for a view
        return seen

    def _say_traffic(self) -> None:
        """Answers per version since the previous traffic line."""
        if self.traffic is None:
            return
        now = self.traffic.counts()
        text = traffic_since(self._traffic_seen, now)
        self._traffic_seen = now
        if text:
            self.say(f"  traffic since last step: {text}", "dim")

    # -- stages -------------------------------------------------------------------------------

    def deploy_first(self) -> None:
        self.stage("1. Deploying v1")
        start = time.monotonic()
        view = self.watch(lambda v: v.tag == "v1" and v.healthy_at, what="v1 becoming Healthy")
        self._record(
            ReleaseOutcome(
                "v1",
                self._repo().log()[-1].sha,
                "Healthy",
                time.monotonic() - start,
                view.current_hash,
                "first deploy",
            )
        )
        self._start_traffic()

    def _start_traffic(self) -> None:
        address = self._virtual_service_address()
        host, _, port = address.rpartition(":")
        self.traffic = TrafficGenerator(
            host, int(port), versions=VERSIONS, rate=self.options.traffic_rate
        )
        self.traffic.start()
        self.say(
            f"traffic: {self.options.traffic_rate:.0f} requests/s to the VirtualService "
            f"at {address}"
        )

    def _virtual_service_address(self) -> str:
        assert self.cluster is not None
        cluster = self.cluster

        def address() -> str:
            vs = cluster.get("networking.istio.io/v1beta1", "VirtualService", "web", NAMESPACE)
            return str((vs["metadata"].get("annotations") or {}).get("headway.dev/address") or "")

        try:
            return wait_until(address, bool, timeout=20, what="the VirtualService's address")
        except WaitTimedOut:
            raise DemoFailed(
                "the local mesh gave the VirtualService no address within 20s"
            ) from None

    def release_good(self, tag: str) -> None:
        self.stage(f"2. Releasing {tag}, a good release")
        sha, start = self._commit_release(tag)
        view = self.watch(self._decided(tag), what=f"{tag} finishing its canary")
        outcome = "Aborted" if view.aborted else "Healthy"
        detail = "every step and analysis passed" if outcome == "Healthy" else view.message
        self._record(
            ReleaseOutcome(tag, sha, outcome, time.monotonic() - start, view.current_hash, detail)
        )

    def release_bad(self, tag: str, stable_tag: str) -> None:
        self.stage(f"3. Releasing {tag}, which fails 30% of its requests")
        sha, start = self._commit_release(tag)
        view = self.watch(self._decided(tag), what=f"the analysis of {tag} deciding")
        took = time.monotonic() - start
        failed = [f"{m} = {v}" for r in view.runs for m, v in r.failed_metrics()]
        outcome = "Aborted" if view.aborted else "Healthy"
        detail = ("analysis failed: " + ", ".join(failed)) if failed else view.message
        self._record(ReleaseOutcome(tag, sha, outcome, took, view.current_hash, detail))
        self.summary = replace(
            self.summary, bad_tag=tag, bad_commit_to_abort=took if view.aborted else None
        )
        if view.aborted:
            self._await_revert(sha, stable_tag)

    def _await_revert(self, bad_sha: str, stable_tag: str) -> None:
        self.stage("4. Converging Git")
        repo = self._repo()
        try:
            reverts = wait_until(
                lambda: repo.reverts_since(bad_sha),
                bool,
                timeout=self.options.stage_timeout,
                what="Headway's revert commit",
                progress=lambda _: self.narrate_change(self.view()),  # the abort settles meanwhile
            )
        except WaitTimedOut:
            self._note(
                f"no revert commit appeared in {self.layout.repo}; see "
                "`headway describe rollout web -n demo` (GitConvergence condition)"
            )
            return
        revert = reverts[0]
        self.summary = replace(self.summary, revert=revert)
        self.say(f"Headway committed {revert.short}: {revert.subject}", "bold")
        self.watch(
            lambda v: v.tag == stable_tag and v.healthy_at and not v.aborted,
            what=f"the Rollout returning to {stable_tag} (Healthy)",
        )
        self._await_notifications()

    def _await_notifications(self) -> None:
        webhook = self.webhook
        assert webhook is not None
        try:
            wait_until(
                webhook.heard,
                lambda heard: set(DEMO_TRIGGERS) <= set(heard),
                timeout=self.options.stage_timeout,
                what="the webhook receiver hearing the abort and the revert",
            )
        except WaitTimedOut:
            self._note(f"the webhook receiver heard only {webhook.heard()}")
            return
        heard = [t for t in webhook.heard() if t in DEMO_TRIGGERS]
        self.say(f"webhook receiver heard {', '.join(heard)}", "bold")

    def _decided(self, tag: str) -> Callable[[RolloutView], bool]:
        """The new revision of `tag` (a pod hash other than the stable one before the commit)
        promoted to Healthy or aborted."""
        before = self.view()
        old_stable = before.stable_hash if before is not None else ""

        def decided(view: RolloutView) -> bool:
            fresh = view.tag == tag and view.current_hash not in ("", old_stable)
            return fresh and (view.aborted or view.healthy_at)

        return decided

    def _commit_release(self, tag: str) -> tuple[str, float]:
        sha = self._repo().release(tag)
        self.say(f'committed {sha[:12]} "Release web {tag}" to main (image headway-demo/web:{tag})')
        return sha, time.monotonic()

    # -- facts --------------------------------------------------------------------------------

    def finish(self) -> DemoSummary:
        if self.traffic is not None:
            self.traffic.stop()
            counts = self.traffic.counts()
            bad = self.summary.bad_tag
            self.summary = replace(
                self.summary,
                bad_client_served=counts.served(bad),
                bad_client_failed=counts.failed(bad),
            )
        bad_hash = next(
            (r.pod_hash for r in self.summary.releases if r.tag == self.summary.bad_tag), ""
        )
        if bad_hash:
            self.summary = replace(self.summary, bad_requests=self._mesh_requests(bad_hash))
        self.summary = replace(
            self.summary, final=self._final_state(), elapsed=time.monotonic() - self.started
        )
        return self.summary

    def _mesh_requests(self, pod_hash: str) -> RevisionRequests | None:
        if not self.metrics:
            return None
        try:
            text = httpx2.get(f"http://{self.metrics}/metrics", timeout=5).text
        except httpx2.HTTPError as err:
            self._note(f"mesh metrics unreadable: {err}")
            return None
        return revision_requests(text, pod_hash)

    def _application_status(self, *, settle: float) -> dict[str, Any]:
        """The Application's status once it reports Synced (waiting up to `settle` s), else
        the status last seen ({} when there is no Application)."""
        assert self.cluster is not None
        cluster = self.cluster

        def status() -> dict[str, Any] | None:
            try:
                app = cluster.get(API, "Application", "web", "argocd")
            except NotFound:
                return None
            return dict(app.get("status") or {})

        def synced(seen: dict[str, Any] | None) -> bool:
            return seen is None or (seen.get("sync") or {}).get("status") == "Synced"

        try:
            found = wait_until(status, synced, timeout=settle, what="the Application syncing")
        except WaitTimedOut as err:
            found = err.last
        return found or {}

    def _final_state(self) -> FinalState | None:
        view = self.view()
        if view is None or self.cluster is None:
            return None
        status = self._application_status(settle=15.0 if self.summary.revert else 0.0)
        return FinalState(
            rollout_phase=view.phase,
            live_image=view.image,
            git_image=self._repo().image(),
            stable_hash=view.stable_hash,
            app_sync=str((status.get("sync") or {}).get("status") or ""),
            app_health=str((status.get("health") or {}).get("status") or ""),
        )

    def _record(self, outcome: ReleaseOutcome) -> None:
        self.summary = replace(self.summary, releases=(*self.summary.releases, outcome))
        style = "green" if outcome.outcome == "Healthy" else "red"
        self.say(f"{outcome.tag}: {outcome.outcome} after {outcome.seconds:.1f}s", f"bold {style}")

    def _note(self, text: str) -> None:
        self.summary = replace(self.summary, missing=(*self.summary.missing, text))
        self.say(text, "yellow")

    def _repo(self) -> DemoRepo:
        if self.repo is None:
            raise DemoFailed("the demo repository was not created")
        return self.repo

    # -- shutdown -----------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the traffic; unless --keep, stop serve and the runtime (and their children)."""
        if self.traffic is not None:
            self.traffic.stop()
        if self.webhook is not None:
            self.webhook.close()
            self.webhook = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None
        if self.options.keep or not self.created:
            return  # kept on purpose, or nothing of ours was started (never touch others')
        stop_serve(self.layout)
        if (self.layout.state / "runtime.json").exists():
            stop_runtime(self.layout)
