"""Git convergence: when a Rollout aborts, commit the revert of its image change to Git.

A step-function controller watching Rollouts. For an aborted Rollout (`status.abort`, or
Degraded with RolloutAborted) whose Application allows it, one step:

    find the Application that manages the Rollout -> is revert-on-abort on?
    -> which images did the failed revision change (stable vs failed pod template)?
    -> which AnalysisRun and metric failed it?
    -> in every repository the Application reads: the commit that set the image,
       a revert already in history (trailer), else an edit of only that image at the tip
    -> commit (local repository) or commit and push (remote) -> record the outcome

The outcome is recorded three ways: an annotation on the Rollout keyed by the abort (failed pod
hash, `abortedAt`, failed run: `headway.dev/git-convergence`, so a step never repeats for the
same abort, while the same image released and aborted again is handled again), the same on the
Application, an
Event on the Rollout, and a `GitConvergence` condition in the Rollout's status. The
`Headway-Revert-Of: <sha>` trailer in the commit covers a controller killed between the
commit and the annotation: the next step finds the revert in history and only records it.

Per Application: `metadata.annotations["headway.dev/revert-on-abort"]` "true" or "false";
without it, on exactly when the Application has automated sync.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

import pygit2

from headway.clock import Clock
from headway.cluster.errors import ClusterError, Conflict, NotFound
from headway.cluster.events import record_event
from headway.cluster.protocol import Cluster
from headway.controllers.convergence.facts import (
    ARGO_API,
    AbortIdentity,
    FailedRelease,
    abort_of,
    failed_release,
    is_aborted,
)
from headway.controllers.convergence.git import BranchWriter, open_branch
from headway.controllers.convergence.record import (
    CONDITION_TYPE,
    STATE_ANNOTATION,
    ConvergenceState,
    condition_for,
    read_state,
)
from headway.controllers.convergence.revert import RevertOutcome, RevertResult, revert_release
from headway.controllers.manager import ObjectKey
from headway.model.obj import Obj
from headway.redaction import redact_url_credentials
from headway.source.git import GitCache
from headway.source.git_commits import BotIdentity
from headway.source.image_scope import application_scopes
from headway.source.spec import raw_sources
from headway.sync.comparison import instance_name

__all__ = [
    "REVERT_ANNOTATION",
    "ConvergenceController",
    "find_application",
    "revert_enabled",
    "revert_in_git",
]

REVERT_ANNOTATION = "headway.dev/revert-on-abort"
FIELD_MANAGER = "headway-git-convergence"
_INSTANCE_LABEL = "app.kubernetes.io/instance"
_TRACKING_ANNOTATION = "argocd.argoproj.io/tracking-id"
_MAX_RETRIES = 5


def _manages(app: Obj, rollout: Obj) -> bool:
    # Tracked under the instance name, so a same-named Application in another namespace
    # never passes for the one that deployed the Rollout.
    name = instance_name(str(app["metadata"]["name"]), str(app["metadata"].get("namespace")))
    meta = rollout["metadata"]
    if (meta.get("labels") or {}).get(_INSTANCE_LABEL) == name:
        return True
    tracking = str((meta.get("annotations") or {}).get(_TRACKING_ANNOTATION) or "")
    return tracking.startswith(f"{name}:")


def find_application(cluster: Cluster, rollout: Obj) -> Obj | None:
    """The Application whose tracking label or annotation is on the Rollout."""
    for app in cluster.list(ARGO_API, "Application"):
        if _manages(app, rollout):
            return app
    return None


def revert_enabled(app: Obj) -> bool:
    """The annotation decides when set; otherwise automated sync turns it on."""
    written = str((app["metadata"].get("annotations") or {}).get(REVERT_ANNOTATION, "")).lower()
    if written in ("true", "false"):
        return written == "true"
    automated = ((app.get("spec") or {}).get("syncPolicy") or {}).get("automated")
    return isinstance(automated, dict) and automated.get("enabled", True) is not False


def revert_in_git(
    app: Obj, release: FailedRelease, *, git: GitCache, identity: BotIdentity, attempts: int
) -> RevertOutcome:
    """Revert the failed release's image change in the repositories `app` reads.

    Idempotent: a revert already in history (its `Headway-Revert-Of` trailer) is only found,
    so this and any other caller (a `MultiClusterRollout`) never both commit one."""
    writers: dict[tuple[str, str], BranchWriter] = {}
    tips: dict[tuple[str, str], pygit2.Tree] = {}

    def branch(url: str, revision: str) -> BranchWriter:
        if (url, revision) not in writers:
            writers[(url, revision)] = open_branch(git, url, revision, identity)
        return writers[(url, revision)]

    def read(url: str, revision: str, path: str) -> str | None:
        if (url, revision) not in tips:
            writer = branch(url, revision)
            tips[(url, revision)] = writer.repo[writer.refresh()].peel(pygit2.Commit).tree
        try:
            blob = tips[(url, revision)][path]
        except KeyError:
            return None
        return blob.data.decode("utf-8", "replace") if isinstance(blob, pygit2.Blob) else None

    try:
        scopes = application_scopes(raw_sources(app), read)
        return revert_release(release, scopes=scopes, open_branch=branch, attempts=attempts)
    except Exception as err:  # an unreachable remote while scoping, a broken repository
        return RevertOutcome(RevertResult.RETRY, f"{type(err).__name__}: {err}")


class ConvergenceController:
    name = "git-convergence"
    watches: Sequence[tuple[str, str]] = ((ARGO_API, "Rollout"),)

    def __init__(
        self,
        cluster: Cluster,
        clock: Clock,
        *,
        git: GitCache,
        identity: BotIdentity | None = None,
        attempts: int = 3,
    ) -> None:
        self._cluster = cluster
        self._clock = clock
        self._git = git
        self._identity = identity or BotIdentity("Headway", "headway@localhost")
        self._attempts = attempts
        self._retries: dict[tuple[ObjectKey, AbortIdentity], int] = {}

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        meta = obj.get("metadata") or {}
        return [ObjectKey(str(meta.get("namespace") or "default"), str(meta.get("name")))]

    def step(self, key: ObjectKey) -> float | None:
        try:
            rollout = self._cluster.get(ARGO_API, "Rollout", key.name, key.namespace)
        except NotFound:
            return None
        if not is_aborted(rollout):
            return None
        status = rollout.get("status") or {}
        pod_hash = str(status.get("currentPodHash") or "")
        if not pod_hash:
            return None  # the abort is not fully written yet; its status update wakes us
        if pod_hash == status.get("stableRS"):
            return None  # an abort of a fully promoted rollout: no failed release to revert
        abort = abort_of(self._cluster, rollout)
        recorded = read_state(rollout)
        if recorded is not None and recorded.answers(abort):
            return None  # this abort was handled already
        app = find_application(self._cluster, rollout)
        if app is None:
            return None  # not managed from Git: nothing to converge
        if not revert_enabled(app):
            return self._record(rollout, app, ConvergenceState.disabled(pod_hash, app), abort=abort)
        release = failed_release(self._cluster, rollout)
        if isinstance(release, str):
            return self._record(
                rollout, app, ConvergenceState.refused(pod_hash, release), abort=abort
            )
        if not release.swaps:
            reason = (
                "the failed revision differs from the stable one in something other than an image"
            )
            return self._record(
                rollout, app, ConvergenceState.refused(pod_hash, reason), abort=abort
            )
        return self._revert(key, rollout, app, release=release, abort=abort)

    def _revert(
        self,
        key: ObjectKey,
        rollout: Obj,
        app: Obj,
        *,
        release: FailedRelease,
        abort: AbortIdentity,
    ) -> float | None:
        outcome = revert_in_git(
            app, release, git=self._git, identity=self._identity, attempts=self._attempts
        )
        return self._conclude(key, rollout, app, abort=abort, outcome=outcome)

    def _conclude(
        self,
        key: ObjectKey,
        rollout: Obj,
        app: Obj,
        *,
        abort: AbortIdentity,
        outcome: RevertOutcome,
    ) -> float | None:
        retry_key = (key, abort)
        if outcome.result is RevertResult.RETRY:
            tries = self._retries.get(retry_key, 0) + 1
            self._retries[retry_key] = tries
            if tries < _MAX_RETRIES:
                self._event(
                    rollout,
                    "GitRevertRetrying",
                    f"attempt {tries}: {outcome.message}",
                    warning=True,
                )
                return min(60.0, 5.0 * float(2 ** (tries - 1)))
            outcome = RevertOutcome(
                RevertResult.REFUSED, f"gave up after {tries} attempts: {outcome.message}"
            )
        self._retries.pop(retry_key, None)
        state = ConvergenceState.from_outcome(abort.pod_hash, outcome)
        return self._record(rollout, app, state, abort=abort)

    def _record(
        self, rollout: Obj, app: Obj, state: ConvergenceState, *, abort: AbortIdentity
    ) -> float | None:
        state = state.for_abort(abort).masked()
        text = json.dumps(state.as_json(), sort_keys=True)
        for obj in (rollout, app):
            self._annotate(obj, text)
        self._event(rollout, state.event_reason, state.message, warning=state.is_failure)
        self._set_condition(rollout, state)
        return None

    def _annotate(self, obj: Obj, text: str) -> None:
        meta = obj["metadata"]
        patch: Obj = {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "metadata": {"name": meta["name"], "annotations": {STATE_ANNOTATION: text}},
        }
        if meta.get("namespace"):
            patch["metadata"]["namespace"] = meta["namespace"]
        self._cluster.apply(patch, field_manager=FIELD_MANAGER, force=True)

    def _event(self, rollout: Obj, reason: str, message: str, *, warning: bool) -> None:
        # Best effort: the annotation and the condition carry the outcome too.
        with contextlib.suppress(ClusterError):
            record_event(
                self._cluster,
                self._clock,
                involved=rollout,
                reason=reason,
                message=redact_url_credentials(message),  # a repoURL may carry a password
                event_type="Warning" if warning else "Normal",
                component=FIELD_MANAGER,
            )

    def _set_condition(self, rollout: Obj, state: ConvergenceState) -> None:
        meta = rollout["metadata"]
        for _ in range(3):
            try:
                current = self._cluster.get(
                    ARGO_API, "Rollout", meta["name"], meta.get("namespace")
                )
                status: dict[str, Any] = dict(current.get("status") or {})
                others = [
                    c for c in status.get("conditions") or [] if c.get("type") != CONDITION_TYPE
                ]
                status["conditions"] = [*others, condition_for(state, self._clock.now())]
                self._cluster.patch_status(
                    ARGO_API,
                    "Rollout",
                    meta["name"],
                    meta.get("namespace"),
                    status,
                    resource_version=current["metadata"].get("resourceVersion"),
                )
                return
            except Conflict:
                continue
            except NotFound:
                return
