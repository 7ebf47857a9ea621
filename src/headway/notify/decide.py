"""What to send for one object, and what is already sent. Purely computational, no I/O.

Subscriptions are annotations, as Argo users write them:

    notifications.argoproj.io/subscribe.<trigger>.<service>: "recipient1;recipient2"
    notifications.argoproj.io/subscribe.<service>: "recipient"   # the defaultTriggers

Deduplication follows Argo's notifications engine: each (oncePer value, trigger, condition,
service, recipient) is a key. A key is sent once when its condition holds and forgotten when
the condition stops holding, so the next time it holds it is sent again; with `oncePer` the
key carries the value (a revision), so one value is announced once however often the
condition flips. Event triggers (no `when`) key on the event occurrence instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from headway.expr import ConditionError, Program
from headway.model.selectors import matches
from headway.notify.config import Condition, GlobalSubscription, NotifyConfig, Template
from headway.notify.gotemplate import REPO_FUNCTIONS, TemplateError
from headway.redaction import Redactor

__all__ = [
    "SUBSCRIBE_PREFIX",
    "Decision",
    "Notification",
    "Subscription",
    "decide",
    "global_subscriptions",
    "subscriptions",
]

SUBSCRIBE_PREFIX = "notifications.argoproj.io/subscribe."


@dataclass(frozen=True, order=True)
class Subscription:
    trigger: str
    service: str
    recipient: str


@dataclass(frozen=True)
class Notification:
    """One message for one recipient, rendered and redacted; `key` deduplicates it."""

    key: str
    trigger: str
    template: str
    service: str
    recipient: str
    subject: str  # "Kind namespace/name"
    title: str
    message: str
    webhook_method: str = ""
    webhook_path: str = ""
    webhook_body: str | None = None  # None: the template has no part for this webhook
    email_subject: str = ""
    slack_attachments: str = ""
    slack_blocks: str = ""


@dataclass(frozen=True)
class Decision:
    notifications: tuple[Notification, ...]
    notified: frozenset[str]  # the object's dedup keys after this decision
    problems: tuple[str, ...]


def subscriptions(
    annotations: Mapping[str, Any], default_triggers: Iterable[str]
) -> tuple[Subscription, ...]:
    """The subscriptions an object's annotations declare, sorted."""
    found: set[Subscription] = set()
    for key, value in annotations.items():
        if not key.startswith(SUBSCRIBE_PREFIX):
            continue
        parts = key[len(SUBSCRIBE_PREFIX):].split(".")
        if len(parts) == 2:
            triggers, service = [parts[0]], parts[1]
        elif len(parts) == 1:
            triggers, service = list(default_triggers), parts[0]
        else:
            continue
        recipients = [r.strip() for r in str(value or "").split(";") if r.strip()] or [""]
        found.update(Subscription(t, service, r) for t in triggers for r in recipients)
    return tuple(sorted(found))


def global_subscriptions(
    config: NotifyConfig, labels: Mapping[str, str]
) -> tuple[Subscription, ...]:
    """The subscriptions of the ConfigMap's `subscriptions` key that cover an object with
    these labels."""
    found: set[Subscription] = set()
    for entry in config.subscriptions:
        if entry.selector is None or matches(entry.selector, labels):
            found.update(_expand(entry, config.default_triggers))
    return tuple(sorted(found))


def _expand(entry: GlobalSubscription, default_triggers: Iterable[str]) -> set[Subscription]:
    triggers = entry.triggers or tuple(default_triggers)
    return {Subscription(t, s, r) for t in triggers for s, r in entry.destinations}


def decide(
    *,
    config: NotifyConfig,
    subject: str,
    env: Mapping[str, Any],
    subscribed: Iterable[Subscription],
    notified: frozenset[str],
    event: tuple[str, str] | None = None,
) -> Decision:
    """The notifications `subscribed` calls for now. `event` is (trigger, occurrence key) when
    an event named a trigger; state triggers are evaluated on `env` every time."""
    keys = set(notified)
    out: list[Notification] = []
    problems: list[str] = []
    for sub in subscribed:
        for index, condition in enumerate(config.triggers.get(sub.trigger, ())):
            if event is None and condition.program is None:
                continue  # fires only on its event
            if event is not None and event[0] != sub.trigger:
                continue
            try:
                fired, once = _holds(condition, env)
            except ConditionError as err:
                problems.append(f"trigger {sub.trigger}[{index}] on {subject}: {err}")
                continue
            prefix = f"{event[1]}:" if event else ""
            key = f"{prefix}{once}:{sub.trigger}:{index}:{sub.service}:{sub.recipient}"
            if not fired:
                keys.discard(key)
            elif key not in keys:
                made, failed = _render_all(
                    config, condition=condition, sub=sub, key=key, subject=subject, env=env
                )
                problems += failed
                if not failed:
                    keys.add(key)
                    out += made
    return Decision(tuple(out), frozenset(keys), tuple(problems))


def _holds(condition: Condition, env: Mapping[str, Any]) -> tuple[bool, str]:
    fired = True if condition.program is None else _run(condition.program, env) is True
    once = ""
    if fired and condition.once_per_program is not None:
        value = _run(condition.once_per_program, env)
        once = "" if value is None else str(value)
    return fired, once


def _run(program: Program, env: Mapping[str, Any]) -> Any:
    return program.evaluate(env)


def _render_all(
    config: NotifyConfig,
    *,
    condition: Condition,
    sub: Subscription,
    key: str,
    subject: str,
    env: Mapping[str, Any],
) -> tuple[list[Notification], list[str]]:
    data = {**env, "context": dict(config.context), "repo": dict(REPO_FUNCTIONS)}
    redactor = Redactor.of(config.secret_values)
    made, problems = [], []
    for name in condition.send:
        template = config.templates.get(name)
        if template is None:
            problems.append(f"trigger {sub.trigger}: no template {name!r}")
            continue
        try:
            made.append(_render(
                template, sub=sub, key=f"{key}:{name}", subject=subject, data=data,
                redactor=redactor,
            ))
        except TemplateError as err:
            problems.append(f"{err} (for {subject})")
    return made, problems


def _render(
    template: Template,
    *,
    sub: Subscription,
    key: str,
    subject: str,
    data: Mapping[str, Any],
    redactor: Redactor,
) -> Notification:
    def text(part: Any) -> str:
        return redactor.text(part.render(data)) if part is not None else ""

    hook = template.webhook.get(sub.service)
    return Notification(
        key=key,
        trigger=sub.trigger,
        template=template.name,
        service=sub.service,
        recipient=sub.recipient,
        subject=subject,
        title=text(template.title),
        message=text(template.message),
        webhook_method=hook.method if hook else "POST",
        webhook_path=text(hook.path) if hook else "",
        webhook_body=text(hook.body) if hook else None,
        email_subject=text(template.email_subject) or text(template.title),
        slack_attachments=text(template.slack_attachments),
        slack_blocks=text(template.slack_blocks),
    )
