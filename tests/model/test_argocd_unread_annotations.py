"""Argo CD resource annotations Headway does not act on are named where they are set.

Before: `argocd.argoproj.io/compare-options: IgnoreExtraneous` (Argo CD's diffing and
compare-options pages) validated cleanly and did nothing. (`skip-reconcile` is read:
test_app_skip_reconcile.py; `PreDelete` hooks run: test_app_pre_delete_hooks.py.)
"""

from __future__ import annotations

import pytest

from headway.model.diagnostics import Severity
from headway.model.validate import validate_text

OBJECT = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    {annotation}
data: {{a: b}}
"""


@pytest.mark.parametrize(
    "annotation",
    ["argocd.argoproj.io/compare-options: ServerSideDiff=true,IncludeMutationWebhook=true"],
)
def test_unread_annotations_are_a_warning_at_their_line(annotation: str) -> None:
    """(IgnoreExtraneous is read now: test_compare_options_annotation.py.)"""
    key = annotation.partition(":")[0]
    report = validate_text(OBJECT.format(annotation=annotation), "cm.yaml")
    (diagnostic,) = report.diagnostics
    assert (diagnostic.line, diagnostic.severity) == (6, Severity.WARNING)
    assert diagnostic.field == f'metadata.annotations["{key}"]'
    assert diagnostic.message.startswith("ServerSideDiff=true: Headway does not run a server-side")


@pytest.mark.parametrize("hook", ["PreDelete", "PostDelete", "PreSync,PreDelete"])
def test_delete_hooks_validate_cleanly(hook: str) -> None:
    text = OBJECT.format(annotation=f"argocd.argoproj.io/hook: {hook}")
    assert validate_text(text, "cm.yaml").diagnostics == []


def test_a_misspelt_hook_is_still_a_typo() -> None:
    text = OBJECT.format(annotation="argocd.argoproj.io/hook: PreSink")
    (diagnostic,) = validate_text(text, "cm.yaml").diagnostics
    assert diagnostic.message.startswith('"PreSink" is not one of')


@pytest.mark.parametrize(
    ("key", "nearest"),
    [
        ("argocd.argoproj.io/sync-option", "argocd.argoproj.io/sync-options"),
        ("argocd.argoproj.io/syncwave", "argocd.argoproj.io/sync-wave"),
        ("argocd.argoproj.io/compare-option", "argocd.argoproj.io/compare-options"),
        ("argocd.argoproj.io/team-owner", None),
    ],
)
def test_a_key_argo_cd_does_not_read_is_a_warning_with_the_nearest(
    key: str, nearest: str | None
) -> None:
    """README: unknown annotations are reported with the nearest known name. A misspelt key
    (`sync-option: Prune=false`) validated cleanly, and Argo CD drops it without a word: the
    resource is pruned after all."""
    report = validate_text(OBJECT.format(annotation=f"{key}: Prune=false"), "cm.yaml")
    (diagnostic,) = report.diagnostics
    assert (diagnostic.line, diagnostic.severity) == (6, Severity.WARNING)
    assert diagnostic.field == f'metadata.annotations["{key}"]'
    hint = f" (did you mean {nearest}?)" if nearest else ""
    assert diagnostic.message == f"not an annotation Argo CD reads{hint}; Argo CD ignores it"


def test_the_keys_argo_cd_reads_and_other_prefixes_are_quiet() -> None:
    annotations = (
        "argocd.argoproj.io/manifest-generate-paths: .\n    "
        "argocd.argoproj.io/tracking-id: 'app:/ConfigMap:shop/settings'\n    "
        "argocd-image-updater.argoproj.io/image-list: web=ghcr.io/example/web\n    "
        "notifications.argoproj.io/subscribe.on-sync-succeeded.slack: team"
    )
    assert validate_text(OBJECT.format(annotation=annotations), "cm.yaml").diagnostics == []
