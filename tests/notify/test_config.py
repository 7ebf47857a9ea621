"""Reading notifications ConfigMaps in Argo's format."""

from __future__ import annotations

from headway.notify.catalog import CATALOG, EVENT_TRIGGERS
from headway.notify.config import load_config

ARGO_CD_CATALOG_TRIGGERS = {
    "on-created", "on-deleted", "on-deployed", "on-health-degraded", "on-sync-failed",
    "on-sync-running", "on-sync-status-unknown", "on-sync-succeeded",
}
ROLLOUTS_CATALOG_TRIGGERS = {
    "on-rollout-aborted", "on-rollout-completed", "on-rollout-step-completed",
    "on-rollout-updated", "on-rollout-paused", "on-analysis-run-failed",
    "on-analysis-run-error", "on-analysis-run-running", "on-scaling-replica-set",
}
HEADWAY_TRIGGERS = {
    "on-sync-retry-exhausted", "on-out-of-sync-too-long", "on-revert-committed",
    "on-revert-failed", "on-approval-requested", "on-promotion-failed",
}


def test_the_built_in_catalog_reads_cleanly_and_has_every_default_trigger() -> None:
    config = load_config({}, secret={}, source="", catalog=CATALOG)
    assert config.problems == ()
    expected = ARGO_CD_CATALOG_TRIGGERS | ROLLOUTS_CATALOG_TRIGGERS | HEADWAY_TRIGGERS
    assert set(config.triggers) == expected
    assert set(EVENT_TRIGGERS.values()) == ROLLOUTS_CATALOG_TRIGGERS | {
        "on-revert-committed", "on-revert-failed", "on-approval-requested",
        "on-promotion-failed",
    }


def test_user_keys_replace_built_in_ones_and_secret_references_are_filled_in() -> None:
    data = {
        "trigger.on-sync-failed": "- when: app.status.sync.status == 'Unknown'\n  send: [mine]\n",
        "template.mine": "message: hello {{.app.metadata.name}}\n",
        "service.webhook.receiver": "url: https://hooks.example/$hook-token\nheaders:\n"
        "- name: Authorization\n  value: Bearer $hook-token\n",
        "context": "argocdUrl: https://cd.example\n",
    }
    config = load_config(data, secret={"hook-token": "s3cr3t-value"}, source="argocd/cm",
                         catalog=CATALOG)
    assert config.problems == ()
    assert config.triggers["on-sync-failed"][0].send == ("mine",)
    receiver = config.services["receiver"]
    assert receiver.kind == "webhook"
    assert receiver.settings["url"] == "https://hooks.example/s3cr3t-value"
    assert receiver.settings["headers"][0]["value"] == "Bearer s3cr3t-value"
    assert config.context == {"argocdUrl": "https://cd.example"}
    assert config.secret_values == ("s3cr3t-value",)


def test_a_bad_key_is_a_problem_naming_configmap_key_line_and_field_and_the_rest_works() -> None:
    data = {
        "trigger.on-broken": "- when: app.status.sync.status ==\n  send: [app-sync-failed]\n",
        "template.bad-yaml": "message: [unclosed\n",
        "service.pager.x": "url: https://x\n",
        "template.ok": "message: fine\n",
    }
    config = load_config(data, secret={}, source="argocd/argocd-notifications-cm",
                         catalog=CATALOG)
    problems = "\n".join(config.problems)
    assert "ConfigMap argocd/argocd-notifications-cm key trigger.on-broken: [0].when:" in problems
    assert "key template.bad-yaml: line 2: not YAML" in problems
    assert "key service.pager.x: service type 'pager' is not one of" in problems
    assert "ok" in config.templates and "on-sync-failed" in config.triggers


def test_a_trigger_sending_an_undefined_template_is_reported() -> None:
    config = load_config({"trigger.on-x": "- when: 'true'\n  send: [nope]\n"}, secret={},
                         source="ns/cm", catalog={})
    assert config.problems == (
        "trigger on-x: sends template 'nope', which no template.nope key defines",
    )


def test_a_grafana_service_takes_its_key_from_the_secret_and_needs_its_api_url() -> None:
    data = {"service.grafana": "apiUrl: https://grafana.example/api\napiKey: $grafana-key\n",
            "service.grafana.nowhere": "apiKey: $grafana-key\n"}
    config = load_config(data, secret={"grafana-key": "glsa_k"}, source="argocd/cm",
                         catalog=CATALOG)
    assert config.services["grafana"].settings["apiKey"] == "glsa_k"
    assert "key service.grafana.nowhere: apiUrl: required for Grafana" in "\n".join(
        config.problems)
