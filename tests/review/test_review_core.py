"""The pure core of `headway diff`: resource changes, the sync preview, marked findings."""

from __future__ import annotations

from typing import Any

import yaml

from headway.check.findings import Finding
from headway.diff import compile_rules
from headway.model.application import IgnoreDifferences, parse_application
from headway.model.diagnostics import Severity
from headway.model.yamlload import Document
from headway.review.changes import ChangeKind, compare_renders
from headway.review.findings import mark_findings
from headway.review.sync_preview import preview_sync
from review.repo import application, config_map, deployment


def _obj(text: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def _with_notes(obj: dict[str, Any], **notes: str) -> dict[str, Any]:
    meta = {**obj["metadata"], "annotations": notes}
    return {**obj, "metadata": meta}


def test_ignore_differences_hide_a_change_as_the_live_diff_does() -> None:
    before = _obj(deployment("web", "shop/web:1.0"))
    after = {**before, "spec": {**before["spec"], "replicas": 7}}
    entry = IgnoreDifferences("apps", "Deployment", None, None, ("/spec/replicas",), (), ())
    assert compare_renders([before], [after]) != ()
    assert compare_renders([before], [after], rules=compile_rules([entry])) == ()


def test_server_fields_and_string_data_normalize_like_the_live_diff() -> None:
    as_data = _obj("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {k: dg==}\n")
    as_string = _obj("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {k: v}\n")
    with_status = {**as_data, "status": {"anything": 1}}
    assert compare_renders([as_data], [as_string]) == ()
    assert compare_renders([as_data], [with_status]) == ()


def test_changes_are_keyed_with_the_destination_namespace() -> None:
    [change] = compare_renders([], [_obj(config_map("c", a="1"))], namespace="shop")
    assert change.key == ("", "ConfigMap", "shop", "c")
    assert change.kind is ChangeKind.ADDED
    assert change.diff_lines[:2] == ("--- base", "+++ head")


def _app(extra: str = "") -> Any:
    app, problems = parse_application(
        Document(_obj(application("web", path="web", extra=extra)), "a.yaml", 0, 1)
    )
    assert app is not None, problems
    return app


def test_prune_false_and_confirm_are_kept_or_waited_on() -> None:
    keep = _with_notes(
        _obj(config_map("keep")), **{"argocd.argoproj.io/sync-options": "Prune=false"}
    )
    ask = _with_notes(
        _obj(config_map("ask")), **{"argocd.argoproj.io/sync-options": "Prune=confirm"}
    )
    gone = _obj(config_map("gone"))
    sync = preview_sync([keep, ask, gone], [], app=_app(), namespace="shop", changed=[])
    assert sorted(sync.pruned) == [
        "ConfigMap/shop/ask: waits for confirmation (Prune=confirm)",
        "ConfigMap/shop/gone: deleted",
        "ConfigMap/shop/keep: kept (Prune=false)",
    ]


def test_waves_and_hooks_in_the_order_a_sync_runs_them() -> None:
    hook = _with_notes(_obj(config_map("migrate")), **{"argocd.argoproj.io/hook": "PreSync"})
    db = _with_notes(_obj(config_map("db")), **{"argocd.argoproj.io/sync-wave": "-1"})
    web = _obj(deployment("web", "shop/web:2.0", wave=1))
    same = _obj(config_map("same"))
    changed = [("", "ConfigMap", "shop", "db"), ("apps", "Deployment", "shop", "web")]
    sync = preview_sync(
        [same], [hook, db, same, web], app=_app(), namespace="shop", changed=changed
    )
    steps = [(s.title, s.hooks, s.applies, s.unchanged) for s in sync.steps]
    assert steps == [
        ("PreSync wave 0", ("ConfigMap/shop/migrate",), (), 0),
        ("Sync wave -1", (), ("ConfigMap/shop/db",), 0),
        ("Sync wave 0", (), (), 1),
        ("Sync wave 1", (), ("apps/Deployment/shop/web",), 0),
    ]


def test_auto_sync_without_prune_is_called_out() -> None:
    manual = preview_sync([_obj(config_map("x"))], [], app=_app(), namespace="shop", changed=[])
    auto = _app("  syncPolicy:\n    automated: {prune: false}\n")
    kept = preview_sync([_obj(config_map("x"))], [], app=auto, namespace="shop", changed=[])
    assert (manual.auto_sync_keeps_removed, kept.auto_sync_keeps_removed) == (False, True)


def _finding(rule: str, line: int, app: str = "web") -> Finding:
    return Finding(rule, "slug", Severity.ERROR, "f.yaml", line, app, "Kind/x", "msg", "hint")


def test_a_finding_that_only_moved_lines_is_not_new() -> None:
    marked = mark_findings(
        [_finding("HW101", 9), _finding("HW202", 3), _finding("HW101", 1, app="other")],
        [_finding("HW101", 4)],
        apps={"web"},
    )
    assert [(m.finding.rule, m.new) for m in marked["web"]] == [("HW101", False), ("HW202", True)]
