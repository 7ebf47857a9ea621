"""Reading a notifications ConfigMap (and its Secret) in Argo's format. Pure.

The keys are those of `argocd-notifications-cm` / `argo-rollouts-notification-configmap`:

* `trigger.<name>`: a YAML list of conditions `{when, send: [templates], oncePer, description}`
  (a condition without `when` fires on the event that names the trigger, as Argo Rollouts'
  event triggers do);
* `template.<name>`: YAML with `message`, `title`, `email.subject`, `webhook.<service>:
  {method, path, body}` and `slack.attachments` / `slack.blocks`, each a Go template;
* `service.<type>` or `service.<type>.<name>`: YAML settings of a webhook, slack, email or
  apprise service; a `$key` inside a string setting is the value of `key` in the Secret;
* `context`: YAML map given to templates as `.context`; `defaultTriggers`: YAML list used by
  `subscribe.<service>` annotations that name no trigger;
* `subscriptions`: YAML list of `{recipients: ["<service>:<recipient>"], triggers, selector}`,
  subscriptions for every object whose labels match `selector` (all objects without one).

Built-in keys (`catalog.py`) sit under the user's: a user key of the same name replaces one.
A key that cannot be read becomes a problem naming the ConfigMap, the key, the line and the
field; the other keys still work.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from headway.expr import ConditionError, Program, compile_condition
from headway.model.selectors import Selector, SelectorError, parse_selector
from headway.model.yamlload import load_one
from headway.notify.gotemplate import GoTemplate, TemplateError, parse_template

__all__ = [
    "SERVICE_KINDS",
    "Condition",
    "GlobalSubscription",
    "NotifyConfig",
    "Service",
    "Template",
    "WebhookTemplate",
    "load_config",
]

SERVICE_KINDS = frozenset({"webhook", "slack", "email", "apprise", "grafana"})
_SECRET_REF = re.compile(r"\$([A-Za-z0-9_.-]+)")


@dataclass(frozen=True)
class Condition:
    """One condition of a trigger: when it holds, send these templates."""

    when: str
    program: Program | None  # None: fires on the named event
    send: tuple[str, ...]
    once_per: str = ""
    once_per_program: Program | None = None


@dataclass(frozen=True)
class WebhookTemplate:
    method: str
    path: GoTemplate
    body: GoTemplate


@dataclass(frozen=True)
class Template:
    name: str
    message: GoTemplate | None = None
    title: GoTemplate | None = None
    email_subject: GoTemplate | None = None
    slack_attachments: GoTemplate | None = None
    slack_blocks: GoTemplate | None = None
    webhook: Mapping[str, WebhookTemplate] = field(default_factory=dict)


@dataclass(frozen=True)
class Service:
    """A delivery destination type: `name` is what subscriptions say (`slack`, `receiver`)."""

    name: str
    kind: str
    settings: Mapping[str, Any]


@dataclass(frozen=True)
class GlobalSubscription:
    """One entry of the `subscriptions` key: (service, recipient) pairs for these triggers
    (empty: the default triggers) on objects whose labels match `selector` (None: all)."""

    destinations: tuple[tuple[str, str], ...]
    triggers: tuple[str, ...]
    selector: Selector | None


@dataclass(frozen=True)
class NotifyConfig:
    triggers: Mapping[str, tuple[Condition, ...]] = field(default_factory=dict)
    templates: Mapping[str, Template] = field(default_factory=dict)
    services: Mapping[str, Service] = field(default_factory=dict)
    context: Mapping[str, Any] = field(default_factory=dict)
    default_triggers: tuple[str, ...] = ()
    subscriptions: tuple[GlobalSubscription, ...] = ()
    secret_values: tuple[str, ...] = ()  # every value of the Secret, to mask in what is sent
    problems: tuple[str, ...] = ()


class _KeyError(ValueError):
    pass


def load_config(
    data: Mapping[str, str],
    *,
    secret: Mapping[str, str],
    source: str,
    catalog: Mapping[str, str],
) -> NotifyConfig:
    """The configuration of ConfigMap `data` over `catalog`; `source` names the ConfigMap."""
    merged = {**catalog, **data}
    triggers: dict[str, tuple[Condition, ...]] = {}
    templates: dict[str, Template] = {}
    services: dict[str, Service] = {}
    context: dict[str, Any] = {}
    defaults: tuple[str, ...] = ()
    global_subscriptions: tuple[GlobalSubscription, ...] = ()
    problems: list[str] = []
    for key in sorted(merged):
        where = f"ConfigMap {source} key {key}" if key in data else f"built-in key {key}"
        try:
            value = _yaml(merged[key])
            if key.startswith("trigger."):
                triggers[key[8:]] = _trigger(value)
            elif key.startswith("template."):
                templates[key[9:]] = _template(key[9:], value)
            elif key.startswith("service."):
                service = _service(key[8:], value, secret)
                services[service.name] = service
            elif key == "context":
                context = dict(_mapping(value, "context"))
            elif key == "defaultTriggers":
                defaults = tuple(str(t) for t in _list(value, "defaultTriggers"))
            elif key == "subscriptions":
                global_subscriptions = _subscriptions(value)
        except _KeyError as err:
            problems.append(f"{where}: {err}")
    problems += _dangling(triggers, templates)
    return NotifyConfig(
        triggers=triggers,
        templates=templates,
        services=services,
        context=context,
        default_triggers=defaults,
        subscriptions=global_subscriptions,
        secret_values=tuple(str(v) for v in secret.values()),
        problems=tuple(problems),
    )


def _yaml(text: str) -> Any:
    try:
        return load_one(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f"line {mark.line + 1}: " if mark is not None else ""
        raise _KeyError(f"{line}not YAML ({getattr(err, 'problem', err)})") from None


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _KeyError(f"{where}: expected a map, got {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _KeyError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _compile(text: str, where: str) -> Program:
    try:
        return compile_condition(text)
    except ConditionError as err:
        raise _KeyError(f"{where}: {err}") from None


def _trigger(value: Any) -> tuple[Condition, ...]:
    conditions = []
    for index, item in enumerate(_list(value, "trigger")):
        spec = _mapping(item, f"[{index}]")
        when = str(spec.get("when") or "").strip()
        once_per = str(spec.get("oncePer") or "").strip()
        send = _list(spec.get("send"), f"[{index}].send")
        if not send:
            raise _KeyError(f"[{index}].send: names no template")
        conditions.append(Condition(
            when=when,
            program=_compile(when, f"[{index}].when") if when else None,
            send=tuple(str(s) for s in send),
            once_per=once_per,
            once_per_program=_compile(once_per, f"[{index}].oncePer") if once_per else None,
        ))
    return tuple(conditions)


def _go(name: str, where: str, text: Any) -> GoTemplate | None:
    if text is None:
        return None
    try:
        return parse_template(f"{name} {where}", str(text))
    except TemplateError as err:
        raise _KeyError(f"{where}: {err}") from None


def _template(name: str, value: Any) -> Template:
    spec = _mapping(value, "template")
    email = _mapping(spec.get("email") or {}, "email")
    slack = _mapping(spec.get("slack") or {}, "slack")
    webhooks = {}
    for service, raw in _mapping(spec.get("webhook") or {}, "webhook").items():
        hook = _mapping(raw, f"webhook.{service}")
        webhooks[str(service)] = WebhookTemplate(
            method=str(hook.get("method") or "GET").upper(),
            path=_go(name, f"webhook.{service}.path", hook.get("path") or "")
            or parse_template(name, ""),
            body=_go(name, f"webhook.{service}.body", hook.get("body") or "")
            or parse_template(name, ""),
        )
    return Template(
        name=name,
        message=_go(name, "message", spec.get("message")),
        title=_go(name, "title", spec.get("title")),
        email_subject=_go(name, "email.subject", email.get("subject")),
        slack_attachments=_go(name, "slack.attachments", slack.get("attachments")),
        slack_blocks=_go(name, "slack.blocks", slack.get("blocks")),
        webhook=webhooks,
    )


def _with_secrets(value: Any, secret: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _SECRET_REF.sub(lambda m: str(secret.get(m.group(1), m.group(0))), value)
    if isinstance(value, Mapping):
        return {k: _with_secrets(v, secret) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_secrets(v, secret) for v in value]
    return value


def _service(rest: str, value: Any, secret: Mapping[str, str]) -> Service:
    kind, _, name = rest.partition(".")
    if kind not in SERVICE_KINDS:
        raise _KeyError(f"service type {kind!r} is not one of {', '.join(sorted(SERVICE_KINDS))}")
    settings = _mapping(value, f"service.{rest}")
    if kind == "webhook" and not settings.get("url"):
        raise _KeyError("url: required for a webhook")
    if kind == "grafana" and not settings.get("apiUrl"):
        raise _KeyError("apiUrl: required for Grafana (its HTTP API, e.g. https://grafana/api)")
    if kind == "apprise" and not settings.get("urls"):
        raise _KeyError("urls: required (a list of Apprise URLs)")
    return Service(name=name or kind, kind=kind, settings=_with_secrets(settings, secret))


def _subscriptions(value: Any) -> tuple[GlobalSubscription, ...]:
    out = []
    for index, item in enumerate(_list(value, "subscriptions")):
        spec = _mapping(item, f"[{index}]")
        destinations = []
        for recipient in _list(spec.get("recipients") or [], f"[{index}].recipients"):
            service, sep, to = str(recipient).partition(":")
            if not sep or not service:
                raise _KeyError(f"[{index}].recipients: {recipient!r} is not <service>:<recipient>")
            destinations.append((service, to))
        triggers = tuple(str(t) for t in _list(spec.get("triggers") or [], f"[{index}].triggers"))
        try:
            selector = parse_selector(str(spec["selector"])) if spec.get("selector") else None
        except SelectorError as err:
            raise _KeyError(f"[{index}].selector: {err}") from None
        out.append(GlobalSubscription(tuple(destinations), triggers, selector))
    return tuple(out)


def _dangling(
    triggers: Mapping[str, tuple[Condition, ...]], templates: Mapping[str, Template]
) -> list[str]:
    return [
        f"trigger {name}: sends template {send!r}, which no template.{send} key defines"
        for name, conditions in sorted(triggers.items())
        for condition in conditions
        for send in condition.send
        if send not in templates
    ]
