"""The Application controller: one reconcile step per call for one Application.

A step reads the Application from the control-plane store, checks its spec, project and
destination, renders its sources (cached by Git tree ids), compares with the live objects,
then either advances the running sync operation by one unit (`sync_executor`), starts a
requested one (an `operation` written on the Application by the CLI, as Argo CD's does), or
asks the automated policy whether to start one. Status is written once, at the end, and the
step returns when it wants to be called again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import ClusterError, Conflict, NotFound
from headway.cluster.events import record_event
from headway.cluster.protocol import Cluster
from headway.controllers.app import operations as ops
from headway.controllers.app import report
from headway.controllers.app.deletion_steps import (
    DeletionEdges,
    DeletionTarget,
    keep_delete_hook_finalizers,
    step_deletion,
)
from headway.controllers.app.diff_settings import (
    ComparisonRules,
    SystemDiffReader,
    hidden_release_warnings,
)
from headway.controllers.app.journal import record_operation_step
from headway.controllers.app.live import (
    LiveReader,
    LiveStateUnknown,
    orphans,
)
from headway.controllers.app.metrics import AppMetrics
from headway.controllers.app.names import APP_API_VERSION
from headway.controllers.app.operation_steps import (
    OperationEdges,
    Setup,
    auto_sync,
    cluster_scoped_crds,
    step_unless_window_closed,
    take_operation,
)
from headway.controllers.app.project import ProjectGuard, ProjectReader
from headway.controllers.app.refresh import ComparisonCache, take_refresh_request
from headway.controllers.app.rollout_owned import owned_rules
from headway.controllers.app.sources import (
    DEFAULT_POLL_SECONDS,
    DesiredState,
    SourceReader,
)
from headway.controllers.cluster_registry import ClusterRegistry, UnknownDestination
from headway.controllers.sharding import Shards
from headway.decisions import DecisionJournal, NullJournal
from headway.diff import IgnoreRuleError, compile_rules
from headway.health import HealthRegistry, default_registry
from headway.model.application import Application, parse_application
from headway.model.argocd_annotations import skips_reconcile
from headway.model.argocd_diff import DiffCustomizations
from headway.model.obj import Obj
from headway.model.rollback_pending import diverged_from_git
from headway.model.yamlload import Document
from headway.redaction import redact_url_credentials, redact_urls_in
from headway.source.spec import raw_sources
from headway.sync import project as project_rules
from headway.sync.comparison import CONTROL_NAMESPACE, Comparison, instance_name
from headway.sync.operation_state import OperationPhase

__all__ = ["APP_API_VERSION", "CONTROL_NAMESPACE", "ApplicationController", "Setup"]

# How soon an app whose live state the cluster would not give (403, a persisting 429) looks
# again: the condition says why meanwhile.
LIVE_UNKNOWN_RETRY_SECONDS = 30.0


class ApplicationController:
    def __init__(
        self,
        *,
        store: Cluster,
        clusters: ClusterRegistry,
        sources: SourceReader,
        clock: Clock,
        health: HealthRegistry | None = None,
        metrics: AppMetrics | None = None,
        poll_seconds: float = DEFAULT_POLL_SECONDS,
        control_namespace: str = CONTROL_NAMESPACE,
        app_namespaces: Sequence[str] = (),
        journal: DecisionJournal | None = None,
        shards: Shards | None = None,
        diff_settings: DiffCustomizations | None = None,
        announce: Callable[[str], None] | None = None,
    ) -> None:
        """`diff_settings`: argocd-cm's system-wide ignore rules and compare options, used as
        given; None reads them from the store's argocd-cm (again every few seconds), and
        `announce` gets its problems and release-hiding rules at each changed reading."""
        self._store = store
        self._shards = shards  # None: every app is this controller's
        self._journal = journal or NullJournal()
        self._control_namespace = control_namespace
        self._app_namespaces = tuple(app_namespaces)
        self._clusters = clusters
        self._sources = sources
        self._clock = clock
        self._health = health or default_registry()
        self.metrics = metrics or AppMetrics()
        self._poll = poll_seconds
        self._live: dict[int, LiveReader] = {}
        self._projects = ProjectReader()
        self.comparisons = ComparisonCache()
        self._system = SystemDiffReader(
            store, clock, namespace=control_namespace, fixed=diff_settings, announce=announce
        )
        # (namespace, name) -> the resourceVersion of this controller's last status write.
        self._own_writes: dict[tuple[str, str], str] = {}
        # (namespace, name) -> its resources' kinds, for apps with nothing to wait for.
        self._settled: dict[tuple[str, str], frozenset[tuple[str, str]]] = {}
        self._deletion_edges = DeletionEdges(
            store=store,
            sources=sources,
            health=self._health,
            reader=self._reader,
            cluster_scoped=self._cluster_scoped,
            condition=self._condition,
            event=lambda raw, reason, message, warning: self._event(
                raw, reason, message, warning=warning
            ),
            write=self._write,
            now=self._now,
            poll_seconds=poll_seconds,
            control_namespace=control_namespace,
        )
        self._operation_edges = OperationEdges(
            store=store,
            health=self._health,
            reader=self._reader,
            cluster_scoped=self._cluster_scoped,
            instance=self._instance,
            condition=self._condition,
            event=self._event,
            diverged=self._diverged,
            now=self._now,
            poll_seconds=poll_seconds,
        )

    # -- entry points -------------------------------------------------------------------------

    def settled_kinds(self, namespace: str, name: str) -> frozenset[tuple[str, str]] | None:
        """The kinds of a settled app's resources as its last step left it (see
        `report.settled_kinds`); None for an app that waits for something or was not seen."""
        return self._settled.get((namespace, name))

    def is_own_status_write(self, obj: Obj) -> bool:
        """Whether `obj` (an Application's watch event) is this controller's own last status
        write coming back: nothing in it is news to the step that wrote it, so it queues no
        step (before: every write echoed into one more reconcile of the same app)."""
        meta = obj.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        written = self._own_writes.get(key)
        return written is not None and written == str(meta.get("resourceVersion") or "")

    def reconcile(self, name: str, namespace: str) -> float | None:
        """One step for one Application; seconds until it wants another (None: gone)."""
        try:
            raw = self._store.get(APP_API_VERSION, "Application", name, namespace)
        except NotFound:
            self._forget(namespace, name)
            return None
        if not self.owns(raw):  # another shard's: it writes nothing here, not even status
            self._forget(namespace, name)
            return None
        if skips_reconcile(raw["metadata"]):  # as Argo CD: not refreshed, synced or written
            return self._poll
        raw = take_refresh_request(
            raw, store=self._store, sources=self._sources, comparisons=self.comparisons
        )
        setup = self._setup(raw)
        status = dict(raw.get("status") or {})
        if raw["metadata"].get("deletionTimestamp") and setup.cluster is not None:
            return self._delete(raw, setup, status)
        if setup.conditions or setup.app is None or setup.cluster is None:
            status["conditions"] = setup.conditions
            status["sync"] = {**(status.get("sync") or {}), "status": "Unknown"}
            return self._write(raw, status, self._poll, None)
        raw, state = take_operation(self._operation_edges, setup, status)
        if state is not None:
            status["operationState"] = state
        return self._reconcile_parsed(setup, raw, status)

    def owns(self, raw: Obj) -> bool:
        """Whether this controller's shard owns the app's destination cluster (always, when
        not sharded). A destination naming no single cluster is shard 0's, which reports it."""
        if self._shards is None:
            return True
        spec = raw.get("spec")
        where = spec.get("destination") if isinstance(spec, dict) else None
        identity = None
        if isinstance(where, dict):
            identity = self._clusters.shard_identity(
                server=str(where.get("server") or "") or None,
                name=str(where.get("name") or "") or None,
            )
        if identity is None:
            return self._shards.shard == 0
        return self._shards.owns(cluster_id=identity.cluster_id, requested=identity.requested)

    def _forget(self, namespace: str, name: str) -> None:
        self.metrics.forget(namespace, name)
        self._own_writes.pop((namespace, name), None)
        self._settled.pop((namespace, name), None)

    def compare(self, name: str, namespace: str) -> tuple[Comparison | None, list[str]]:
        """The comparison `headway app diff` shows, or the errors that prevent it; writes
        nothing."""
        raw = self._store.get(APP_API_VERSION, "Application", name, namespace)
        setup = self._setup(raw)
        if setup.conditions or setup.app is None or setup.cluster is None:
            return None, [str(c["message"]) for c in setup.conditions]
        app = setup.app
        desired_state = self._sources.desired(app, raw)
        if desired_state.errors:
            return None, list(desired_state.errors)
        try:
            rules = self._rules(app, desired_state)
        except IgnoreRuleError as err:
            return None, [str(err)]
        try:
            return self._compare(app, setup.cluster, desired_state, rules), []
        except LiveStateUnknown as err:
            return None, [str(err)]

    def _rules(self, app: Application, desired: DesiredState) -> ComparisonRules:
        """The app's ignoreDifferences followed by argocd-cm's system-wide rules, as Argo CD
        merges them, with the router fields the app's Rollouts write between them
        (`rollout_owned`); IgnoreRuleError when either cannot be used (a malformed argocd-cm
        key stops every app's comparison, as it does Argo CD's)."""
        own = compile_rules(app.spec.ignore_differences)
        return ComparisonRules.of(
            own,
            repr(app.spec.ignore_differences),
            self._system.current(),
            owned_rules(desired.objects),
        )

    def _compare(
        self,
        app: Application,
        cluster: Cluster,
        desired_state: DesiredState,
        rules: ComparisonRules,
    ) -> Comparison:
        reader = self._reader(cluster)
        instance = self._instance(app)
        refreshed = self.comparisons.refresh(
            app=instance,
            namespace=app.spec.destination.namespace or "",
            desired_state=desired_state,
            rules=rules.rules,
            rules_identity=rules.identity,
            options=rules.options,
            read_live=lambda desired: reader.managed(instance, desired),
            assess=self._health.assess,
            clock_kinds=self._health.reads_clock,
            cluster_scoped=self._cluster_scoped(cluster, desired_state.objects),
        )
        return refreshed.comparison

    def _cluster_scoped(
        self, cluster: Cluster, objects: Sequence[Mapping[str, Any]]
    ) -> frozenset[tuple[str, str]]:
        """Kinds with no namespace: what the cluster serves so, and the app's own CRDs."""
        return self._reader(cluster).cluster_scoped() | cluster_scoped_crds(objects)

    def _delete(self, raw: Obj, setup: Setup, status: Obj) -> float | None:
        """A deleted Application: one step of `deletion_steps` (PreDelete hooks, cascade,
        cleanup, one finalizer at a time)."""
        app, cluster, guard = setup.app, setup.cluster, setup.guard
        assert app is not None and cluster is not None and guard is not None
        target = DeletionTarget(raw, app, cluster, guard)
        wait = step_deletion(self._deletion_edges, target, status)
        if wait is None:
            meta = raw["metadata"]
            self.metrics.forget(str(meta.get("namespace") or ""), str(meta["name"]))
        return wait

    # -- setup --------------------------------------------------------------------------------

    def _setup(self, raw: Obj) -> Setup:
        setup = Setup(raw)
        app, diagnostics = parse_application(Document(raw, _where(raw), 0, 0))
        errors = [d for d in diagnostics if d.severity == "error"]
        if app is None or errors:
            message = "; ".join(str(d) for d in errors) or "invalid Application"
            setup.conditions.append(self._condition("InvalidSpecError", message))
            return setup
        setup.app = app
        namespace_refusal = self._namespace_refusal(app)
        if namespace_refusal is not None:
            setup.conditions.append(self._condition("InvalidSpecError", namespace_refusal))
            return setup
        destination = app.spec.destination
        try:
            entry = self._clusters.resolve(server=destination.server, name=destination.name)
            project = self._projects.load(self._store, app.spec.project, self._control_namespace)
        except (UnknownDestination, ValueError) as err:
            setup.conditions.append(self._condition("InvalidSpecError", str(err)))
            return setup
        source_namespace = project_rules.source_namespace_refusal(
            project.name,
            project.spec,
            app_namespace=app.metadata.namespace or "",
            control_namespace=self._control_namespace,
        )
        if source_namespace is not None:
            setup.conditions.append(self._condition("InvalidSpecError", str(source_namespace)))
            return setup
        setup.cluster = entry.cluster
        setup.guard = ProjectGuard(
            project,
            entry.server,
            entry.name,
            cluster_namespaces=entry.namespaces,
            cluster_resources=entry.cluster_resources,
        )
        refusals = [setup.guard.source(str(s.get("repoURL") or "")) for s in raw_sources(raw)]
        refusals.append(setup.guard.destination(destination.namespace or ""))
        for refusal in filter(None, refusals):
            setup.conditions.append(self._condition("InvalidSpecError", refusal))
        return setup

    def _instance(self, app: Application) -> str:
        namespace = app.metadata.namespace or ""
        return instance_name(app.name, namespace, control_namespace=self._control_namespace)

    def _namespace_refusal(self, app: Application) -> str | None:
        """Why this controller does not serve an Application in its namespace (Argo CD's
        `application.namespaces`): nothing of it is rendered, compared or synced."""
        namespace = app.metadata.namespace or ""
        managed = project_rules.app_namespace_managed(
            namespace, control_namespace=self._control_namespace, patterns=self._app_namespaces
        )
        if managed:
            return None
        served = ", ".join((self._control_namespace, *self._app_namespaces))
        return (
            f"Application {namespace}/{app.name} is not reconciled: namespace {namespace} is "
            f"not one this controller serves Applications in ({served}); an administrator "
            "adds it with `headway serve --app-namespaces`"
        )

    def _diverged(self, raw: Obj) -> list[Obj]:
        """`DivergedFromGit` while a rollback's commit waits for Git (`model.rollback_pending`)."""
        message = diverged_from_git(raw)
        return [self._condition("DivergedFromGit", message)] if message else []

    def _condition(self, kind: str, message: str) -> dict[str, Any]:
        return report.condition(kind, message, self._now())

    def _now(self) -> datetime:
        return self._clock.now()

    # -- compare and act ----------------------------------------------------------------------

    def _reconcile_parsed(self, setup: Setup, raw: Obj, status: Obj) -> float | None:
        app, cluster = setup.app, setup.cluster
        assert app is not None and cluster is not None and setup.guard is not None
        state = status.get("operationState")
        running = ops.is_running(state)
        problem = ops.unreadable(state) if running and state else ""
        if problem:  # e.g. a phase written by hand: end it, naming the field, not crash-loop
            self._end_in_error(status, raw, app, f"cannot continue the operation: {problem}")
            return self._write(raw, status, self._poll, app)
        pinned = [p for p in ops.pinned_revisions(state) if p] if running and state else []
        desired_state = self._sources.desired(app, raw, revisions=pinned)
        if running and state is not None and not pinned:
            status["operationState"] = ops.pin_revisions(state, desired_state.revisions)
        if desired_state.errors:
            message = "; ".join(desired_state.errors)
            status["conditions"] = [self._condition("ComparisonError", message)]
            status["conditions"] += self._diverged(raw)  # Git down after an offline rollback
            status["sync"] = {**(status.get("sync") or {}), "status": "Unknown"}
            if running and state is not None:
                self._end_in_error(status, raw, app, f"ComparisonError: {message}")
            return self._write(raw, status, self._poll, app)
        raw = setup.raw = keep_delete_hook_finalizers(self._store, raw, desired_state.objects)
        try:
            rules = self._rules(app, desired_state)
        except IgnoreRuleError as err:
            status["conditions"] = [self._condition("ComparisonError", str(err))]
            status["sync"] = {**(status.get("sync") or {}), "status": "Unknown"}
            return self._write(raw, status, self._poll, app)
        try:
            comparison = self._compare(app, cluster, desired_state, rules)
        except LiveStateUnknown as err:  # never compare (or sync) against a guess
            status["conditions"] = [self._condition("ComparisonError", str(err))]
            status["sync"] = {**(status.get("sync") or {}), "status": "Unknown"}
            return self._write(raw, status, min(self._poll, LIVE_UNKNOWN_RETRY_SECONDS), app)
        status.update(report.compared_status(raw, comparison, desired_state.revisions, self._now()))
        status["conditions"] = report.comparison_conditions(
            comparison,
            desired_state.warnings,
            self._now(),
            system_warnings=hidden_release_warnings(rules.hidden, desired_state.objects),
        )
        status["conditions"] += self._orphan_warning(setup, cluster)
        if running and state is not None:
            wait = step_unless_window_closed(
                self._operation_edges,
                setup,
                status=status,
                comparison=comparison,
                rules=rules.rules,
            )
        else:
            wait = auto_sync(
                self._operation_edges,
                setup,
                status=status,
                comparison=comparison,
                revisions=desired_state.revisions,
            )
        return self._write(raw, status, wait, app)

    def _end_in_error(self, status: Obj, raw: Obj, app: Application, message: str) -> None:
        """A running operation whose sources cannot be rendered (its pinned commit gone, a
        broken chart) ends in Argo CD's Error phase instead of running forever."""
        state = ops.ended(
            status["operationState"], phase=OperationPhase.ERROR, message=message, now=self._now()
        )
        status["operationState"] = state
        status["history"] = ops.append_history(
            status.get("history") or [],
            state,
            sources=raw_sources(raw),
            limit=app.spec.revision_history_limit,
        )

    def _reader(self, cluster: Cluster) -> LiveReader:
        reader = self._live.get(id(cluster))
        if reader is None:
            reader = self._live[id(cluster)] = LiveReader(cluster)
        return reader

    def _orphan_warning(self, setup: Setup, cluster: Cluster) -> list[Obj]:
        """The project's `orphanedResources` with `warn`: Argo CD's OrphanedResourceWarning."""
        assert setup.guard is not None and setup.app is not None
        settings = setup.guard.project.spec.orphaned_resources
        namespace = setup.app.spec.destination.namespace or ""
        if settings is None or not settings.warn or not namespace:
            return []
        found = orphans(self._reader(cluster), namespace, settings.ignore)
        if not found:
            return []
        named = ", ".join(str(k) for k in found[:5]) + (" ..." if len(found) > 5 else "")
        message = f"Application has {len(found)} orphaned resources ({named})"
        return [self._condition("OrphanedResourceWarning", message)]

    def _event(self, raw: Obj, reason: str, message: str, *, warning: bool = False) -> None:
        try:
            record_event(
                self._store,
                self._clock,
                involved=raw,
                reason=reason,
                message=redact_url_credentials(message),
                event_type="Warning" if warning else "Normal",
                component="headway-application-controller",
            )
        except ClusterError:
            return

    # -- write --------------------------------------------------------------------------------

    def _remember_settled(self, raw: Obj, status: Obj) -> None:
        meta = raw["metadata"]
        key = (str(meta.get("namespace") or ""), str(meta["name"]))
        kinds = report.settled_kinds(status) if not raw.get("operation") else None
        if kinds is None:
            self._settled.pop(key, None)
        else:
            self._settled[key] = kinds

    def _write(self, raw: Obj, status: Obj, wait: float, app: Application | None) -> float:
        """Write the status unless only timestamps would change: a write wakes every
        watcher of Applications, this controller included. Credentials in URLs (a repoURL
        echoed by a Git error, or copied into `comparedTo`) are masked first."""
        meta = raw["metadata"]
        old = raw.get("status") or {}
        status = redact_urls_in(status)
        status["conditions"] = report.keep_transition_times(
            old.get("conditions") or [], status.get("conditions") or []
        )
        project = app.spec.project if app else ""
        self._remember_settled(raw, status)
        looked = self._clock.now().timestamp()
        self.metrics.observe(
            report.metrics_sample(
                raw,
                status,
                project,
                observed_at=looked,
                policy=app.spec.sync_policy if app else None,
            )
        )
        if not report.worth_writing(old, status, now=self._now(), restamp_seconds=self._poll):
            return wait
        # A write that starts an operation (the automated policy's) or carries a running one
        # is preconditioned on what this step read: a request or a `terminate` written
        # meanwhile wins, and the next step decides again from it. A step whose write is
        # refused so is like one killed before writing, which every unit tolerates.
        guarded = ops.is_running(old.get("operationState")) or ops.is_running(
            status.get("operationState")
        )
        try:
            written = self._store.patch_status(
                APP_API_VERSION,
                "Application",
                meta["name"],
                meta.get("namespace"),
                status,
                resource_version=str(meta["resourceVersion"]) if guarded else None,
            )
        except NotFound:
            return self._poll
        except Conflict:
            return 0.0
        key = (str(meta.get("namespace") or ""), str(meta["name"]))
        self._own_writes[key] = str(written["metadata"].get("resourceVersion") or "")
        record_operation_step(
            self._journal,
            app=raw,
            before=old.get("operationState"),
            after=status.get("operationState"),
            at=self._now(),
        )
        return wait


def _where(raw: Mapping[str, Any]) -> str:
    meta = raw.get("metadata") or {}
    return f"Application {meta.get('namespace', '')}/{meta.get('name', '')}"
