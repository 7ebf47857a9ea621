"""The built-in triggers and templates, as ConfigMap keys in Argo's format. Pure data.

Argo CD's and Argo Rollouts' catalog triggers keep their names and their `when` / `oncePer`
semantics (Argo CD's fire on Application state; Argo Rollouts' fire on the controller's
events, so they have no `when`). Headway adds:

* on-sync-retry-exhausted: automated sync spent its retry budget on a failing revision;
* on-out-of-sync-too-long: OutOfSync for `headway.outOfSyncSeconds` >= 30 minutes;
* on-revert-committed / on-revert-failed: the Git revert after an abort was pushed / refused;
* on-approval-requested: a promotion waits at an environment's approval gate; on-promotion-failed:
  a promotion failed there and the pipeline stopped (events on the environment's Application, so
  they fire for that Application's subscriptions).

Templates are Headway's own wording; every template has `message` and `title`, and a webhook
without a `webhook.<service>` part gets Headway's JSON body (see docs/notifications.md).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["APPLICATION_EVENT_TRIGGERS", "CATALOG", "EVENT_TRIGGERS", "event_trigger"]

_OP = "app.status.operationState"

_APP_TRIGGERS = {
    "on-created": ("true", "app.metadata.name"),
    "on-deleted": ("app.metadata.deletionTimestamp != nil", "app.metadata.deletionTimestamp"),
    "on-deployed": (
        f"{_OP} != nil and {_OP}.phase in ['Succeeded'] and app.status.health.status == 'Healthy'",
        f"{_OP}?.syncResult?.revision",
    ),
    "on-health-degraded": ("app.status.health.status == 'Degraded'", ""),
    "on-sync-failed": (f"{_OP} != nil and {_OP}.phase in ['Error', 'Failed']", ""),
    "on-sync-running": (f"{_OP} != nil and {_OP}.phase in ['Running']", ""),
    "on-sync-status-unknown": ("app.status.sync.status == 'Unknown'", ""),
    "on-sync-succeeded": (f"{_OP} != nil and {_OP}.phase in ['Succeeded']", ""),
    "on-sync-retry-exhausted": (
        "any(app.status.conditions ?? [], "
        "{.type == 'SyncError' and .message contains 'retry budget spent'})",
        "app.status.sync.revision",
    ),
    "on-out-of-sync-too-long": (
        "app.status.sync.status == 'OutOfSync' and headway.outOfSyncSeconds >= 1800",
        "app.status.sync.revision",
    ),
}

_APP_MESSAGES = {
    "on-created": "Application {{.app.metadata.name}} was created.",
    "on-deleted": "Application {{.app.metadata.name}} was deleted.",
    "on-deployed": "Application {{.app.metadata.name}} is running revision "
    "{{.app.status.operationState.syncResult.revision}} and is Healthy.",
    "on-health-degraded": "Application {{.app.metadata.name}} is Degraded.",
    "on-sync-failed": "Sync of {{.app.metadata.name}} {{.app.status.operationState.phase}}: "
    "{{.app.status.operationState.message}}",
    "on-sync-running": "Sync of {{.app.metadata.name}} started at "
    "{{.app.status.operationState.startedAt}}.",
    "on-sync-status-unknown": "Sync status of {{.app.metadata.name}} is Unknown."
    "{{range .app.status.conditions}} {{.type}}: {{.message}}{{end}}",
    "on-sync-succeeded": "Sync of {{.app.metadata.name}} succeeded at "
    "{{.app.status.operationState.finishedAt}}.",
    "on-sync-retry-exhausted": "Automated sync of {{.app.metadata.name}} gave up on revision "
    "{{.app.status.sync.revision}}: its retry budget is spent.",
    "on-out-of-sync-too-long": "Application {{.app.metadata.name}} has been OutOfSync for "
    "{{.headway.outOfSyncMinutes}} minutes.",
}

#: Event reasons of the Rollout controller (and Headway's Git convergence) -> trigger.
EVENT_TRIGGERS: Mapping[str, str] = {
    "RolloutAborted": "on-rollout-aborted",
    "RolloutCompleted": "on-rollout-completed",
    "RolloutStepCompleted": "on-rollout-step-completed",
    "RolloutUpdated": "on-rollout-updated",
    "RolloutPaused": "on-rollout-paused",
    "AnalysisRunFailed": "on-analysis-run-failed",
    "AnalysisRunError": "on-analysis-run-error",
    "AnalysisRunRunning": "on-analysis-run-running",
    "ScalingReplicaSet": "on-scaling-replica-set",
    "GitReverted": "on-revert-committed",
    "GitRevertFailed": "on-revert-failed",
    "ApprovalRequested": "on-approval-requested",
    "PromotionFailed": "on-promotion-failed",
}

#: Event triggers whose events are about an Application (their templates read `.app`).
APPLICATION_EVENT_TRIGGERS = frozenset({"on-approval-requested", "on-promotion-failed"})

_EVENT_MESSAGES = {
    "on-rollout-aborted": "Rollout {{.rollout.metadata.name}} was aborted: {{.event.message}}",
    "on-rollout-completed": "Rollout {{.rollout.metadata.name}} completed: {{.event.message}}",
    "on-rollout-step-completed": "Rollout {{.rollout.metadata.name}}: {{.event.message}}",
    "on-rollout-updated": "Rollout {{.rollout.metadata.name}}: {{.event.message}}",
    "on-rollout-paused": "Rollout {{.rollout.metadata.name}} paused: {{.event.message}}",
    "on-analysis-run-failed": "Analysis of {{.rollout.metadata.name}} failed: "
    "{{.event.message}}",
    "on-analysis-run-error": "Analysis of {{.rollout.metadata.name}} errored: "
    "{{.event.message}}",
    "on-analysis-run-running": "Analysis of {{.rollout.metadata.name}} started: "
    "{{.event.message}}",
    "on-scaling-replica-set": "Rollout {{.rollout.metadata.name}}: {{.event.message}}",
    "on-revert-committed": "Rollout {{.rollout.metadata.name}} was aborted and its image "
    "change was reverted in Git: {{.event.message}}",
    "on-revert-failed": "Rollout {{.rollout.metadata.name}} was aborted but the revert could "
    "not be committed to Git: {{.event.message}}",
    "on-approval-requested": "A promotion into {{.app.metadata.name}} waits for approval: "
    "{{.event.message}}",
    "on-promotion-failed": "A promotion into {{.app.metadata.name}} failed and its previous "
    "image was re-committed; the pipeline stopped: {{.event.message}}",
}


def event_trigger(reason: str) -> str | None:
    """The trigger an event of this reason fires, or None."""
    return EVENT_TRIGGERS.get(reason)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _catalog() -> dict[str, str]:
    keys: dict[str, str] = {}
    for trigger, (when, once_per) in _APP_TRIGGERS.items():
        template = trigger.removeprefix("on-")
        lines = [f"- when: {_quote(when)}", f"  send: [app-{template}]"]
        if once_per:
            lines.append(f"  oncePer: {_quote(once_per)}")
        keys[f"trigger.{trigger}"] = "\n".join(lines) + "\n"
        title = f"{trigger} {{{{.app.metadata.name}}}}"
        keys[f"template.app-{template}"] = (
            f"title: {_quote(title)}\nmessage: {_quote(_APP_MESSAGES[trigger])}\n"
        )
    for trigger in EVENT_TRIGGERS.values():
        template = trigger.removeprefix("on-")
        keys[f"trigger.{trigger}"] = f"- send: [{template}]\n"
        subject = "app" if trigger in APPLICATION_EVENT_TRIGGERS else "rollout"
        title = f"{trigger} {{{{.{subject}.metadata.name}}}}"
        keys[f"template.{template}"] = (
            f"title: {_quote(title)}\nmessage: {_quote(_EVENT_MESSAGES[trigger])}\n"
        )
    return keys


#: Built-in ConfigMap keys, under the user's.
CATALOG: Mapping[str, str] = _catalog()
