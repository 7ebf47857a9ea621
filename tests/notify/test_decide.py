"""Which notifications an object's state calls for, deduplicated as Argo's engine does."""

from __future__ import annotations

from typing import Any

from headway.notify.catalog import CATALOG
from headway.notify.config import load_config
from headway.notify.decide import (
    Decision,
    Subscription,
    decide,
    global_subscriptions,
    subscriptions,
)

CONFIG = load_config(
    {"service.webhook.receiver": "url: http://127.0.0.1:9/\n",
     "context": "argocdUrl: https://cd.example\n",
     "defaultTriggers": "[on-sync-failed, on-deployed]\n"},
    secret={"token": "planted-secret-123"}, source="argocd/cm", catalog=CATALOG,
)


def app(phase: str | None = None, *, health: str = "Healthy", revision: str = "aaa",
        message: str = "") -> dict[str, Any]:
    status: dict[str, Any] = {"health": {"status": health}, "sync": {"status": "Synced"}}
    if phase:
        status["operationState"] = {
            "phase": phase, "message": message, "syncResult": {"revision": revision},
        }
    return {"metadata": {"name": "web", "namespace": "argocd"}, "status": status}


def step(obj: dict[str, Any], trigger: str, notified: frozenset[str] = frozenset()) -> Decision:
    return decide(
        config=CONFIG, subject="Application argocd/web", env={"app": obj, "headway": {}},
        subscribed=[Subscription(trigger, "receiver", "")], notified=notified,
    )


def test_annotations_subscribe_per_trigger_or_to_the_default_triggers() -> None:
    annotations = {
        "notifications.argoproj.io/subscribe.on-sync-failed.slack": "ops; dev",
        "notifications.argoproj.io/subscribe.receiver": "",
        "other": "x",
    }
    assert subscriptions(annotations, CONFIG.default_triggers) == (
        Subscription("on-deployed", "receiver", ""),
        Subscription("on-sync-failed", "receiver", ""),
        Subscription("on-sync-failed", "slack", "dev"),
        Subscription("on-sync-failed", "slack", "ops"),
    )


def test_sync_failed_is_sent_once_while_it_holds_and_again_after_it_cleared() -> None:
    failed = step(app("Failed", message="apply failed"), "on-sync-failed")
    assert [n.message for n in failed.notifications] == ["Sync of web Failed: apply failed"]
    again = step(app("Failed"), "on-sync-failed", failed.notified)
    assert again.notifications == ()
    cleared = step(app("Running"), "on-sync-failed", again.notified)
    assert cleared.notifications == () and cleared.notified == frozenset()
    assert len(step(app("Error"), "on-sync-failed", cleared.notified).notifications) == 1


def test_deployed_is_announced_once_per_revision_even_when_the_condition_flips() -> None:
    first = step(app("Succeeded", revision="aaa"), "on-deployed")
    assert len(first.notifications) == 1
    degraded = step(app("Succeeded", health="Degraded", revision="aaa"), "on-deployed",
                    first.notified)
    back = step(app("Succeeded", revision="aaa"), "on-deployed", degraded.notified)
    assert back.notifications == ()
    newer = step(app("Succeeded", revision="bbb"), "on-deployed", back.notified)
    assert "bbb" in newer.notifications[0].message


def test_event_triggers_fire_only_on_their_event_once_per_occurrence() -> None:
    rollout = {"metadata": {"name": "web"}}
    sub = [Subscription("on-rollout-aborted", "receiver", "")]

    def on(event: tuple[str, str] | None) -> Decision:
        return decide(config=CONFIG, subject="Rollout shop/web",
                      env={"rollout": rollout, "event": {"message": "analysis failed"}},
                      subscribed=sub, notified=frozenset(), event=event)

    assert on(None).notifications == ()
    assert on(("on-rollout-completed", "e#1")).notifications == ()
    aborted = on(("on-rollout-aborted", "e#1")).notifications
    assert [n.message for n in aborted] == ["Rollout web was aborted: analysis failed"]
    assert aborted[0].key != on(("on-rollout-aborted", "e#2")).notifications[0].key


def test_secret_values_never_reach_a_rendered_message() -> None:
    leaky = app("Failed", message="auth failed for token planted-secret-123 at "
                "https://bot:hunter22@git.example/r.git")
    message = step(leaky, "on-sync-failed").notifications[0].message
    assert "planted-secret-123" not in message and "hunter22" not in message
    assert "***" in message


def test_a_condition_that_cannot_be_evaluated_is_a_problem_not_a_crash() -> None:
    config = load_config({"trigger.on-x": "- when: app.status.health.status > 3\n  send: [t]\n",
                          "template.t": "message: m\n"}, secret={}, source="ns/cm", catalog={})
    decision = decide(config=config, subject="Application argocd/web", env={"app": app()},
                      subscribed=[Subscription("on-x", "receiver", "")], notified=frozenset())
    assert decision.notifications == ()
    assert decision.problems and decision.problems[0].startswith("trigger on-x[0] on Application")


def test_the_configmaps_subscriptions_cover_objects_their_selector_matches() -> None:
    config = load_config(
        {"subscriptions": "- recipients: [slack:deploys, email:ops@example.com]\n"
                          "  triggers: [on-sync-failed]\n  selector: team=shop,env in (prod)\n"
                          "- recipients: ['receiver:']\n",
         "defaultTriggers": "[on-deployed]\n"},
        secret={}, source="argocd/cm", catalog=CATALOG,
    )
    assert config.problems == ()
    assert global_subscriptions(config, {"team": "shop", "env": "prod"}) == (
        Subscription("on-deployed", "receiver", ""),
        Subscription("on-sync-failed", "email", "ops@example.com"),
        Subscription("on-sync-failed", "slack", "deploys"),
    )
    assert global_subscriptions(config, {"team": "shop", "env": "dev"}) == (
        Subscription("on-deployed", "receiver", ""),
    )


def test_a_bad_subscriptions_entry_is_a_problem_naming_the_field() -> None:
    config = load_config({"subscriptions": "- recipients: [nocolon]\n"}, secret={},
                         source="argocd/cm", catalog={})
    assert config.problems == (
        "ConfigMap argocd/cm key subscriptions: [0].recipients: 'nocolon' is not "
        "<service>:<recipient>",
    )
