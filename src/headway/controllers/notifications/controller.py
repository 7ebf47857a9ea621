"""The notifications controller: Argo CD / Argo Rollouts notifications, in their format.

Two step controllers share one `Notifications` core:

* `notifications-apps` watches Applications and evaluates the state triggers their
  `subscribe.*` annotations name (on-sync-failed, on-deployed, ...), with the configuration
  of `argocd/argocd-notifications-cm` and its Secret `argocd-notifications-secret`;
* `notifications-events` watches Events: an Event about a Rollout whose reason names a
  trigger (RolloutAborted -> on-rollout-aborted, GitReverted -> on-revert-committed, ...)
  fires it for that Rollout's subscriptions, with `argo-rollouts-notification-configmap` /
  `argo-rollouts-notification-secret` from the `argo-rollouts` namespace (or `argocd`);
  an Event about an Application whose reason names an Application event trigger
  (ApprovalRequested -> on-approval-requested, recorded by the promotion controller) fires it
  for that Application's subscriptions, with the Application configuration.

Steps only decide and queue: the `DeliveryWorker` task sends. Dedup keys, handled events and
the outbox live in `<state_dir>/notifications.json`, so a restart neither forgets a queued
message nor sends one again.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx2
from prometheus_client.registry import CollectorRegistry

from headway.clock import Clock
from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster
from headway.controllers.manager import ObjectKey
from headway.controllers.notifications.delivery import DeliveryWorker, NotifyMetrics, Sender
from headway.controllers.notifications.state import NotifyState
from headway.kubetime import parse_time
from headway.model.obj import Obj
from headway.notify.catalog import APPLICATION_EVENT_TRIGGERS as APP_EVENTS
from headway.notify.catalog import CATALOG, event_trigger
from headway.notify.config import NotifyConfig, Service, load_config
from headway.notify.decide import (
    Decision,
    Notification,
    Subscription,
    decide,
    global_subscriptions,
    subscriptions,
)
from headway.redaction import Redactor

__all__ = ["STATE_FILE", "AppNotifications", "EventNotifications", "Notifications"]

log = logging.getLogger(__name__)

ARGO_API = "argoproj.io/v1alpha1"
STATE_FILE = "notifications.json"
APP_CONFIG = ("argocd", "argocd-notifications-cm", "argocd-notifications-secret")
ROLLOUT_CONFIG_NAMESPACES = ("argo-rollouts", "argocd")
ROLLOUT_CONFIG = ("argo-rollouts-notification-configmap", "argo-rollouts-notification-secret")
_EVENT_SUBJECTS = {False: "Rollout", True: "Application"}  # by "is an Application event"


class Notifications:
    """Reads configuration, decides, remembers and queues; shared by both step controllers."""

    def __init__(
        self,
        *,
        cluster: Cluster,
        clock: Clock,
        http: httpx2.AsyncClient,
        state_dir: Path,
        registry: CollectorRegistry,
        sender: Sender | None = None,
    ) -> None:
        self.cluster = cluster
        self.clock = clock
        self.state = NotifyState.load(state_dir / STATE_FILE, now=clock.now().timestamp())
        self.metrics = NotifyMetrics(registry)
        self.worker = DeliveryWorker(
            state=self.state, resolve=self._resolve, clock=clock, http=http,
            metrics=self.metrics, sender=sender,
        )
        self._reported: set[str] = set()

    def config(self, kind: str) -> NotifyConfig:
        """The configuration for notifications about `kind` (Application or Rollout)."""
        if kind == "Application":
            namespace, configmap, secret = APP_CONFIG
            found = self._read(namespace, configmap, secret)
            assert found is not None  # not required: an absent ConfigMap is the catalog alone
            return found
        for namespace in ROLLOUT_CONFIG_NAMESPACES:
            config = self._read(namespace, *ROLLOUT_CONFIG, required=True)
            if config is not None:
                return config
        return load_config({}, secret={}, source="", catalog=CATALOG)

    def _read(
        self, namespace: str, configmap: str, secret: str, *, required: bool = False
    ) -> NotifyConfig | None:
        try:
            data = self.cluster.get("v1", "ConfigMap", configmap, namespace).get("data") or {}
        except NotFound:
            if required:
                return None
            data = {}
        try:
            values = secret_data(self.cluster.get("v1", "Secret", secret, namespace))
        except NotFound:
            values = {}
        config = load_config(
            data, secret=values, source=f"{namespace}/{configmap}", catalog=CATALOG
        )
        for problem in config.problems:
            if problem not in self._reported:  # once per process, not once per step
                self._reported.add(problem)
                log.warning("notifications: %s", problem)
        return config

    def _resolve(self, n: Notification) -> tuple[Service | None, Redactor]:
        config = self.config(n.subject.split(" ", 1)[0])
        return config.services.get(n.service), Redactor.of(config.secret_values)

    def apply(self, subject: str, decision: Decision) -> None:
        """Remember the decision's keys, queue its notifications, persist, wake the worker."""
        for problem in decision.problems:
            if problem not in self._reported:  # once per process, not once per step
                self._reported.add(problem)
                log.warning("notifications: %s", problem)
        for n in decision.notifications:
            self.metrics.queued.labels(trigger=n.trigger, notifier=n.service).inc()
        if decision.notified:
            self.state.notified[subject] = sorted(decision.notified)
        else:
            self.state.notified.pop(subject, None)
        self.worker.enqueue(list(decision.notifications))
        self.state.save()
        self.worker.start()


def secret_data(secret: Obj) -> dict[str, str]:
    """A Secret's values: `data` decoded from base64 (undecodable values skipped), then
    `stringData` over it, as the API server merges them."""
    values: dict[str, str] = {}
    for key, encoded in (secret.get("data") or {}).items():
        try:
            values[str(key)] = base64.b64decode(str(encoded), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            continue
    values.update({str(k): str(v) for k, v in (secret.get("stringData") or {}).items()})
    return values


def subscribed(obj: Obj, config: NotifyConfig) -> tuple[Subscription, ...]:
    """The object's `subscribe.*` annotations and the ConfigMap's `subscriptions` that
    select it."""
    meta = obj.get("metadata") or {}
    mine = subscriptions(meta.get("annotations") or {}, config.default_triggers)
    shared = global_subscriptions(config, meta.get("labels") or {})
    return tuple(sorted(set(mine) | set(shared)))


def _key(obj: Obj) -> list[ObjectKey]:
    meta = obj.get("metadata") or {}
    return [ObjectKey(str(meta.get("namespace") or ""), str(meta.get("name")))]


class AppNotifications:
    name = "notifications-apps"
    watches: Sequence[tuple[str, str]] = ((ARGO_API, "Application"),)

    def __init__(self, core: Notifications) -> None:
        self._core = core

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        return _key(obj)

    def step(self, key: ObjectKey) -> float | None:
        core = self._core
        subject = f"Application {key}"
        try:
            app = core.cluster.get(ARGO_API, "Application", key.name, key.namespace or None)
        except NotFound:
            core.state.notified.pop(subject, None)
            core.state.out_of_sync_since.pop(subject, None)
            return None
        config = core.config("Application")
        subs = subscribed(app, config)
        env = {"app": app, "headway": self._headway_facts(subject, app)}
        if not subs:
            return None
        decision = decide(
            config=config, subject=subject, env=env, subscribed=subs,
            notified=frozenset(core.state.notified.get(subject, ())),
        )
        core.apply(subject, decision)
        out_of_sync = subject in core.state.out_of_sync_since
        return 60.0 if out_of_sync else None  # out-of-sync-too-long needs time to pass

    def _headway_facts(self, subject: str, app: Obj) -> Mapping[str, Any]:
        """Values Headway gives conditions and templates besides `app`: how long the app
        has been OutOfSync (tracked here, from the first step that saw it so)."""
        now = self._core.clock.now().timestamp()
        since = self._core.state.out_of_sync_since
        status = str(((app.get("status") or {}).get("sync") or {}).get("status") or "")
        if status == "OutOfSync":
            since.setdefault(subject, now)
        else:
            since.pop(subject, None)
        seconds = now - since[subject] if subject in since else 0.0
        return {"outOfSyncSeconds": seconds, "outOfSyncMinutes": int(seconds // 60)}


class EventNotifications:
    name = "notifications-events"
    watches: Sequence[tuple[str, str]] = (("v1", "Event"),)

    def __init__(self, core: Notifications) -> None:
        self._core = core

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        involved = obj.get("involvedObject") or {}
        trigger = event_trigger(str(obj.get("reason")))
        if trigger is None or involved.get("kind") != _EVENT_SUBJECTS[trigger in APP_EVENTS]:
            return []
        return _key(obj)

    def step(self, key: ObjectKey) -> float | None:
        core = self._core
        try:
            event = core.cluster.get("v1", "Event", key.name, key.namespace or None)
        except NotFound:
            return None
        trigger = event_trigger(str(event.get("reason")))
        occurrence = f"{key}#{event.get('count') or 1}"
        if trigger is None or occurrence in core.state.events or self._is_history(event):
            return None
        involved = event.get("involvedObject") or {}
        kind = _EVENT_SUBJECTS[trigger in APP_EVENTS]
        try:
            about = core.cluster.get(
                ARGO_API, kind, str(involved.get("name")), key.namespace or None
            )
        except ClusterError:
            return None
        subject = f"{kind} {key.namespace}/{involved.get('name')}"
        config = core.config(kind)
        subs = subscribed(about, config)
        if not any(s.trigger == trigger for s in subs):
            return None
        name = "app" if kind == "Application" else "rollout"
        decision = decide(
            config=config, subject=subject, env={name: about, "event": event},
            subscribed=subs, notified=frozenset(), event=(trigger, occurrence),
        )
        core.state.events.append(occurrence)
        core.apply(f"{subject} event", Decision(decision.notifications, frozenset(),
                                                decision.problems))
        return None

    def _is_history(self, event: Obj) -> bool:
        """An event last seen before this controller ever started is history, not news."""
        when = parse_time(event.get("lastTimestamp") or event.get("eventTime"))
        if when is None:
            return False
        return when.timestamp() < self._core.state.started_at - 1.0
