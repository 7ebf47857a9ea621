"""The promotion controller: one step of one `Promotion` per call, decided by the pure core.

    read the Promotion -> resolve its environment (pipeline, repository edge)
    -> gather facts (Git, the Application and its Rollouts, the sibling promotions)
    -> lifecycle.decide -> do the plan's one action -> write the status once -> events

Every fact is read again on each step, and the only side effects are idempotent by what they
leave behind: a promotion commit carries `Headway-Promotion: <name>` (found again after a
restart, so never committed twice), a revert carries `Headway-Revert-Of`, the next
environment's Promotion has a name derived from this one, and an approval issue carries a
marker naming its request, which is recorded before the issue is opened (found again, so
never opened twice). An approval request is recorded before its ApprovalRequested Events,
which are named by the request and marked `announced` on it, so the approvers are told once.
A test hook (`hook`) is called at
each point where a kill can land, so the resume tests stop the controller exactly there.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from headway.clock import Clock
from headway.cluster.errors import AlreadyExists, ClusterError, Conflict, NotFound
from headway.cluster.events import record_event, record_event_once
from headway.cluster.protocol import Cluster
from headway.controllers import exit_points
from headway.controllers.manager import ObjectKey
from headway.kubetime import format_precise_time
from headway.model.obj import Obj
from headway.promotion import facts
from headway.promotion.forge import ForgeError
from headway.promotion.forge_approvals import request_marker
from headway.promotion.lifecycle import (
    Action,
    ActionKind,
    Context,
    GitFacts,
    Plan,
    Stage,
    decide,
)
from headway.promotion.live import LiveState, LiveVerdict, image_matches, judge_live
from headway.promotion.record import (
    API_VERSION,
    KIND,
    TERMINAL,
    ApprovalRecord,
    Phase,
    PromotionSpec,
    PromotionStatus,
    read_spec,
    read_status,
    spec_problems,
    status_json,
)
from headway.redaction import redact_url_credentials
from headway.source.errors import SourceError

__all__ = ["FIELD_MANAGER", "PromotionController", "next_name", "promotion_object"]

log = logging.getLogger(__name__)

FIELD_MANAGER = "headway-promotions"
_RESOLVE_RETRY_SECONDS = 30.0
_WATCHING_LIVE = frozenset({Phase.COMMITTED, Phase.VERIFYING})

Hook = Callable[[str], None]
"""Called with "before-action", "after-action", "outcome-told", "approval-recorded",
"approval-announced", "request-recorded", "issue-opened" and "after-status" (tests kill
there)."""


def next_name(spec: PromotionSpec, environment: str) -> str:
    """The next environment's Promotion, named from this one so it is created once."""
    digest = hashlib.sha256(f"{spec.name}->{environment}".encode()).hexdigest()[:8]
    return f"{spec.pipeline}-{environment}-{digest}"


def promotion_object(spec: PromotionSpec) -> Obj:
    """A Promotion as stored, from its spec (used by the CLI and for the next environment)."""
    body: Obj = {
        "pipeline": spec.pipeline,
        "environment": spec.environment,
        "image": spec.image,
        "author": spec.author,
        "requestedAt": format_precise_time(spec.requested_at),
        "origin": spec.origin,
    }
    if spec.break_glass is not None:
        body["breakGlass"] = {"by": spec.break_glass.by, "reason": spec.break_glass.reason}
    if spec.hotfix_reason:
        body["hotfix"] = {"reason": spec.hotfix_reason}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": spec.name,
            "namespace": spec.namespace,
            "labels": {
                "headway.dev/pipeline": spec.pipeline,
                "headway.dev/environment": spec.environment,
            },
        },
        "spec": body,
    }


class PromotionController:
    name = "promotions"
    watches: Sequence[tuple[str, str]] = (
        (API_VERSION, KIND),
        (facts.ARGO_API, "Application"),
        (facts.ARGO_API, "Rollout"),
    )

    def __init__(
        self,
        cluster: Cluster,
        clock: Clock,
        *,
        resolve: facts.StageResolver,
        destination: facts.Destination | None = None,
        hook: Hook | None = None,
    ) -> None:
        self._cluster = cluster
        self._clock = clock
        self._resolve = resolve
        self._destination = destination
        self._hook = hook or (lambda _point: None)

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        meta = obj.get("metadata") or {}
        if obj.get("kind") == KIND:
            return [ObjectKey(str(meta.get("namespace") or "default"), str(meta.get("name")))]
        # An Application or Rollout changed: only a promotion waiting for an environment to
        # run its commit depends on that (gates, queues and re-commits do not).
        keys = []
        for promotion in self._cluster.list(API_VERSION, KIND):
            if read_status(promotion).phase in _WATCHING_LIVE:
                pmeta = promotion["metadata"]
                keys.append(ObjectKey(str(pmeta.get("namespace")), str(pmeta["name"])))
        return keys

    def step(self, key: ObjectKey) -> float | None:
        try:
            obj = self._cluster.get(API_VERSION, KIND, key.name, key.namespace)
        except NotFound:
            return None
        spec, status = read_spec(obj), read_status(obj)
        if status.phase in TERMINAL:
            return None
        problems = spec_problems(obj)
        if problems:  # fails closed: a promotion that does not say what it is does nothing
            message = f"Promotion {key}: " + "; ".join(problems)
            self._write(obj, status.moved(Phase.REFUSED, message, finished_at=self._clock.now()))
            return None
        resolved = self._resolve(spec)
        if isinstance(resolved, str):  # fails closed: nothing is committed without settings
            self._write(obj, status.moved(status.phase, resolved))
            return _RESOLVE_RETRY_SECONDS
        try:
            plan = decide(self._context(spec, status, resolved))
            return self._carry_out(obj, spec, plan, resolved)
        except facts.FileChangedUnderGate as err:  # judged one file, the tip holds another
            message = f"{err}; deciding again against the new tip"
            self._write(obj, read_status(self._refetch(obj)).moved(status.phase, message))
            return 0.0
        except (SourceError, ValueError, ForgeError) as err:  # a remote or forge down, a bad file
            message = f"cannot go on: {type(err).__name__}: {redact_url_credentials(str(err))}"
            current = read_status(self._refetch(obj))  # with what the step recorded (a request)
            self._write(obj, current.moved(current.phase, message))
            return _RESOLVE_RETRY_SECONDS

    def _refetch(self, obj: Obj) -> Obj:
        meta = obj["metadata"]
        try:
            return self._cluster.get(API_VERSION, KIND, meta["name"], meta["namespace"])
        except NotFound:
            return obj

    def _context(
        self, spec: PromotionSpec, status: PromotionStatus, resolved: facts.Resolved
    ) -> Context:
        repo, stage = resolved.repo, resolved.stage
        record = status.approval
        if resolved.approvals is not None and record is not None and record.issue:
            # Decisions commented on the forge's issue join those recorded on the object.
            said = resolved.approvals.decisions(record.issue)
            spec = replace(spec, decisions=(*spec.decisions, *said))
        siblings = facts.promotions_of(self._cluster, spec)
        commit = status.commit or repo.find_commit(spec.name)
        before_commit = not status.commit
        git = GitFacts(  # all read at one tip (the resolver fetches once per step)
            pinned=repo.pinned(),
            promotion_commit=commit if before_commit else "",
            revert_commit=repo.find_revert(commit) if commit else "",
            config_change=repo.config_change() if before_commit else "",
            exempt=repo.exempt(),
            file_version=repo.file_version() if before_commit else "",
        )
        app, rollouts = facts.app_and_rollouts(
            self._cluster,
            name=stage.application,
            namespace=resolved.app_namespace,
            destination=self._destination,
        )
        synced = self._synced(app, repo, commit)
        # A commit that keeps the tag (a hotfix nonce) is judged by the synced revision.
        moves_tag = not commit or not image_matches(status.previous_image, spec.image)
        if app:
            live = judge_live(
                app, rollouts, target=spec.image, moves_tag=moves_tag, synced_to_commit=synced
            )
        else:
            live = LiveVerdict(LiveState.WAITING, f"Application {stage.application} not found")
        return Context(
            spec=spec,
            status=status,
            stage=stage,
            git=git,
            live=live,
            queue=facts.queue_of(spec, siblings),
            synced=synced,
            upstream_passed=facts.upstream_passed(spec, stage=stage, siblings=siblings),
            now=self._clock.now(),
        )

    @staticmethod
    def _synced(app: Obj, repo: facts.EnvironmentRepo, commit: str) -> bool:
        sync = (app.get("status") or {}).get("sync") or {}
        revisions = [sync.get("revision"), *(sync.get("revisions") or [])]
        if not commit:
            return False
        return any(isinstance(r, str) and r and repo.contains(r, commit) for r in revisions)

    def _carry_out(
        self, obj: Obj, spec: PromotionSpec, plan: Plan, resolved: facts.Resolved
    ) -> float | None:
        status = plan.status
        if plan.action is not None:
            self._hook("before-action")
            status = self._act(spec, plan.action, status, resolved.repo)
            self._hook("after-action")
            # The window a random kill rarely hits: acted, not yet recorded (kill trials).
            exit_points.reached(f"promotion-{plan.action.kind.value.lower()}-done")
        # Told before anything is written: a kill before the write tells again on resume,
        # which the comment's marker turns into nothing; told after, it could be lost.
        self._close_issue(spec, read_status(obj), status, resolved)
        self._hook("outcome-told")
        status = self._announce(obj, spec, status, resolved)  # before the forge, which may fail
        status = self._with_issue(obj, spec, status, resolved)
        self._write(obj, status)
        self._hook("after-status")
        for event_type, reason, message in plan.events:
            self._event(obj, reason, message, warning=event_type == "Warning")
        if status.phase is Phase.FAILED and read_status(obj).phase is not Phase.FAILED:
            text = f"promotion {spec.name}: {spec.image} in {spec.environment}: {status.message}"
            self._tell_application(resolved, "PromotionFailed", text, warning=True)
        return plan.requeue_after

    def _act(
        self,
        spec: PromotionSpec,
        action: Action,
        status: PromotionStatus,
        repo: facts.EnvironmentRepo,
    ) -> PromotionStatus:
        if action.kind is ActionKind.COMMIT:
            sha = repo.commit_image(
                action.image,
                promotion=spec,
                previous=status.previous_image,
                file_version=action.file_version,
            )
            return replace(status, commit=sha, message=f"{status.message}: {sha[:12]}")
        if action.kind is ActionKind.REVERT:
            sha = repo.revert_image(action.image, promotion=spec, commit=status.commit)
            return replace(status, revert_commit=sha)
        if action.kind is ActionKind.START_NEXT:
            name = next_name(spec, action.environment)
            self._start_next(spec, name, action.environment)
            return replace(status, next_promotion=name)
        return status  # REQUEST_APPROVAL: announced once the request is recorded

    def _with_issue(
        self, obj: Obj, spec: PromotionSpec, status: PromotionStatus, resolved: facts.Resolved
    ) -> PromotionStatus:
        """With a forge, a gate waiting without its issue gets it: the request is recorded
        first, so a step killed after the forge opened the issue and before its number was
        written finds that issue by the request's marker instead of opening another."""
        record = status.approval
        waiting = status.phase is Phase.AWAITING_APPROVAL
        if resolved.approvals is None or record is None or record.issue or not waiting:
            return status
        self._write(obj, status)
        self._hook("request-recorded")
        number, url = resolved.approvals.open(
            spec,
            approvers=resolved.stage.approvers,
            requested_at=record.requested_at,
            deadline=record.deadline,
        )
        self._hook("issue-opened")
        return replace(status, approval=replace(record, issue=number, issue_url=url))

    @staticmethod
    def _close_issue(
        spec: PromotionSpec,
        before: PromotionStatus,
        after: PromotionStatus,
        resolved: facts.Resolved,
    ) -> None:
        """The gate ended (either way, or the promotion was superseded), or asked again on a
        new issue (the file changed under it): say so on the issue it was waiting on."""
        record, now = before.approval, after.approval
        waited = before.phase is Phase.AWAITING_APPROVAL
        if resolved.approvals is None or record is None or not record.issue or not waited:
            return
        same_issue = now is not None and now.issue == record.issue
        if after.phase is Phase.AWAITING_APPROVAL and same_issue:
            return
        with contextlib.suppress(ForgeError):  # best effort: the promotion's status says it
            once = f"outcome of {request_marker(spec, record.requested_at)}"
            resolved.approvals.tell(
                record.issue, f"{after.phase.value}: {after.message}", once=once
            )

    def _announce(
        self, obj: Obj, spec: PromotionSpec, status: PromotionStatus, resolved: facts.Resolved
    ) -> PromotionStatus:
        """A waiting request not yet announced gets its ApprovalRequested Events, once: the
        request is written first, and each Event is named by the request, so a step killed
        after recording one finds it on resume and records nothing more (the Application's
        is what its `subscribe.on-approval-requested.<service>` subscriptions are told)."""
        record = status.approval
        if record is None or record.announced or status.phase is not Phase.AWAITING_APPROVAL:
            return status
        self._write(obj, status)
        self._hook("approval-recorded")
        occurrence = request_marker(spec, record.requested_at)
        message = _approval_message(spec, record, resolved.stage)
        try:
            for involved in [obj, *self._application(resolved)]:
                record_event_once(
                    self._cluster, self._clock, involved=involved, occurrence=occurrence,
                    reason="ApprovalRequested", message=message, component=FIELD_MANAGER,
                )
        except ClusterError:  # not announced yet: the next step records the same Events
            return status
        self._hook("approval-announced")
        return replace(status, approval=replace(record, announced=True))

    def _application(self, resolved: facts.Resolved) -> list[Obj]:
        app, _ = facts.app_and_rollouts(
            self._cluster, name=resolved.stage.application, namespace=resolved.app_namespace
        )
        return [app] if app else []

    def _tell_application(
        self, resolved: facts.Resolved, reason: str, message: str, *, warning: bool
    ) -> None:
        """An Event on the environment's Application, where its notification subscriptions
        are (on-promotion-failed)."""
        for app in self._application(resolved):
            self._event(app, reason, message, warning=warning)

    def _start_next(self, spec: PromotionSpec, name: str, environment: str) -> None:
        following = replace(
            spec,
            name=name,
            environment=environment,
            requested_at=self._clock.now(),
            origin="auto",
            break_glass=None,
            decisions=(),
            hotfix_reason="",  # a hotfix is for the environment it was asked for only
        )
        with contextlib.suppress(AlreadyExists):
            self._cluster.apply(promotion_object(following), field_manager=FIELD_MANAGER)

    def _write(self, obj: Obj, status: PromotionStatus) -> None:
        meta = obj["metadata"]
        body = status_json(status)
        for _ in range(3):
            try:
                current = self._cluster.get(API_VERSION, KIND, meta["name"], meta["namespace"])
                if (current.get("status") or {}) == body:
                    return
                self._cluster.patch_status(
                    API_VERSION,
                    KIND,
                    meta["name"],
                    meta["namespace"],
                    body,
                    resource_version=current["metadata"].get("resourceVersion"),
                )
                return
            except Conflict:
                continue  # a decision was recorded meanwhile: the status is still ours

    def _event(self, obj: Obj, reason: str, message: str, *, warning: bool) -> None:
        with contextlib.suppress(ClusterError):  # best effort: the status carries it too
            record_event(
                self._cluster,
                self._clock,
                involved=obj,
                reason=reason,
                message=message,
                event_type="Warning" if warning else "Normal",
                component=FIELD_MANAGER,
            )


def _approval_message(spec: PromotionSpec, record: ApprovalRecord, stage: Stage) -> str:
    """What an approval request tells its approvers, made from the request alone (the same
    text however many steps it takes to announce it)."""
    deadline = format_precise_time(record.deadline)
    return (
        f"promotion {spec.name}: {spec.image} into {spec.environment} (requested by "
        f"{spec.author}) needs approve/deny from {', '.join(stage.approvers) or 'nobody'} "
        f"before {deadline}; `headway approve {spec.name}` or `headway deny {spec.name}`"
    )
