"""One Application's review from its renders at BASE and HEAD. Purely computational.

The HEAD Application decides how its resources are compared (its ignoreDifferences and
destination namespace) and synced (its sync options and policy): that is the spec the
controller will hold after the merge. An Application only at BASE is compared with nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from headway.check.context import AppUnit
from headway.check.manifest import as_dict, namespace_of
from headway.diff import CompiledRule, IgnoreRuleError, compile_rules
from headway.model.application import Application, parse_application
from headway.model.argocd_diff import CompareOptions
from headway.review.changes import compare_renders
from headway.review.findings import MarkedFinding
from headway.review.model import AppChange, AppReview
from headway.review.sync_preview import preview_sync

__all__ = ["AppRenders", "review_app"]

_DEFAULT_OPTIONS = CompareOptions()


@dataclass(frozen=True)
class AppRenders:
    """An Application as found at each revision (None where it does not exist)."""

    base: AppUnit | None
    head: AppUnit | None

    @property
    def current(self) -> AppUnit:
        unit = self.head or self.base
        assert unit is not None, "an Application exists at one revision at least"
        return unit

    def spec_changed(self) -> bool:
        if self.base is None or self.head is None:
            return True
        old, new = self.base.application, self.head.application
        return (old.obj if old else None) != (new.obj if new else None)


def review_app(
    renders: AppRenders,
    *,
    reasons: Sequence[str],
    findings: Sequence[MarkedFinding] = (),
    errors: Sequence[str] = (),
    system_rules: Sequence[CompiledRule] = (),
    compare_options: CompareOptions = _DEFAULT_OPTIONS,
) -> AppReview:
    """`system_rules`: the repository's argocd-cm system-wide ignore rules, added to the
    app's own as the controller adds them; `compare_options`: its `resource.compareoptions`."""
    unit = renders.current
    label = "HEAD" if renders.head is not None else "BASE"
    app, problems = _parsed(unit, label)
    own_rules, rule_error = _rules(app, label)
    rules = (*own_rules, *system_rules)
    namespace = _namespace(unit)
    base = [d.obj for d in renders.base.objects] if renders.base else []
    head = [d.obj for d in renders.head.objects] if renders.head else []
    changes = compare_renders(base, head, rules=rules, namespace=namespace, options=compare_options)
    sync = preview_sync(base, head, app=app, namespace=namespace, changed=[c.key for c in changes])
    return AppReview(
        name=unit.name,
        namespace=namespace,
        change=_change(renders, has_changes=bool(changes)),
        reasons=tuple(reasons),
        resources=changes,
        sync=sync if renders.head is not None else None,
        findings=tuple(findings),
        errors=(*errors, *problems, *rule_error),
        app_namespace=namespace_of(unit.application.obj) if unit.application else "",
    )


def _change(renders: AppRenders, *, has_changes: bool) -> AppChange:
    if renders.base is None:
        return AppChange.ADDED
    if renders.head is None:
        return AppChange.REMOVED
    return AppChange.CHANGED if has_changes else AppChange.UNCHANGED


def _parsed(unit: AppUnit, label: str) -> tuple[Application | None, tuple[str, ...]]:
    if unit.application is None:
        return None, ()
    app, diagnostics = parse_application(unit.application)
    if app is None:
        return None, tuple(f"{label}: {d}" for d in diagnostics)
    return app, ()


def _rules(app: Application | None, label: str) -> tuple[tuple[CompiledRule, ...], tuple[str, ...]]:
    if app is None:
        return (), ()
    try:
        return tuple(compile_rules(app.spec.ignore_differences)), ()
    except IgnoreRuleError as err:
        return (), (f"{label}: {err}",)


def _namespace(unit: AppUnit) -> str:
    spec = as_dict(as_dict(unit.application.obj if unit.application else {}).get("spec"))
    return str(as_dict(spec.get("destination")).get("namespace") or "")
