"""At runtime, an argocd-cm system-wide rule that hides a release is reported on the apps it
concerns and printed by `headway serve`, with `headway check`'s HW322 judgement.

Before: with argocd-cm only in the cluster, nothing said that a rule hid a Deployment's
image: every app deploying one read Synced while Git changed the version.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_harness import (
    application,
    apply_argocd_cm,
    config_map,
    deployment,
    make_harness,
    manifests,
)

from headway.check.system_ignore_risk import releases_hidden_by
from headway.clock import VirtualClock
from headway.controllers.app.diff_settings import (
    REREAD_SECONDS,
    SystemDiffReader,
    problem_lines,
    read_diff_customizations,
)

IMAGE_RULE = "resource.customizations.ignoreDifferences.apps_Deployment"
HIDES_IMAGES = "jqPathExpressions:\n- .spec.template.spec.containers[] | .image\n"


def _hidden_warnings(status: dict[str, Any]) -> list[str]:
    return [
        str(c["message"])
        for c in status.get("conditions") or []
        if c["type"] == "IgnoreDifferencesWarning" and IMAGE_RULE in str(c["message"])
    ]


def _synced(status: dict[str, Any]) -> bool:
    return (status.get("sync") or {}).get("status") == "Synced"


def test_an_app_deploying_the_hidden_kind_carries_the_warning_until_the_rule_is_narrowed(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(
        tmp_path,
        clock,
        {"web/all.yaml": manifests(deployment("web")), "cfg/all.yaml": manifests(config_map("c"))},
    )
    apply_argocd_cm(h, {IMAGE_RULE: HIDES_IMAGES})
    h.install(application("web", h.remote.url, path="web", automated={}))
    h.install(application("cfg", h.remote.url, path="cfg", automated={}))
    status = h.run("web", lambda s: _synced(s) and bool(_hidden_warnings(s)))
    (message,) = _hidden_warnings(status)
    assert "is not a plain path" in message and "Deployment" in message
    assert _hidden_warnings(h.run("cfg", _synced)) == []  # no Deployment: not concerned
    apply_argocd_cm(h, {IMAGE_RULE: "jsonPointers:\n- /spec/replicas\n"})
    clock.advance(REREAD_SECONDS)
    h.run("web", lambda s: _synced(s) and not _hidden_warnings(s))


def test_serve_prints_the_hidden_release_with_the_check_judgement(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    apply_argocd_cm(h, {IMAGE_RULE: "managedFieldsManagers:\n- kubectl-edit\n",
                   "resource.customizations.ignoreDifferences.all":
                   "managedFieldsManagers:\n- kube-controller-manager\n"})  # fmt: skip
    settings = read_diff_customizations(h.store)
    shared = [h for rule in settings.ignores for h in releases_hidden_by(rule)]
    assert [h.key for h in shared] == [IMAGE_RULE]  # Argo CD's documented rule stays quiet
    assert problem_lines(settings) == [f"argocd-cm: {IMAGE_RULE}: warning: {shared[0].message}"]
    assert "kubectl-edit owns on every Deployment" in shared[0].message


def test_serve_prints_a_changed_argocd_cm_reading_once(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    printed: list[str] = []
    reader = SystemDiffReader(h.store, clock, announce=printed.append)
    apply_argocd_cm(h, {IMAGE_RULE: "jsonPointers:\n- /spec/replicas\n"})
    reader.current()
    assert printed == []  # the first reading's lines are printed at start
    apply_argocd_cm(h, {IMAGE_RULE: HIDES_IMAGES})
    clock.advance(REREAD_SECONDS)
    reader.current()
    assert len(printed) == 1 and printed[0].startswith(f"argocd-cm: {IMAGE_RULE}: warning: ")
    assert "is not a plain path" in printed[0]
    clock.advance(REREAD_SECONDS)
    reader.current()  # the same resourceVersion: nothing printed again
    assert len(printed) == 1
