"""HW324: an Application whose sources render no object at all.

Argo CD syncs an empty render without a word: the Application reads Synced and Healthy and
nothing is deployed. It happens when the values enable nothing (a key the chart does not read,
`cluster-autoscaler:` for a chart that reads `clusterAutoscaler:`), when every template is
conditional, or when the path holds no manifest. A source that could not be rendered is HW002
already, and a path holding a file that does not load is HW003: an Application with either is
not judged here.
"""

from __future__ import annotations

from collections.abc import Iterable

from headway.check.context import CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.manifest import app_sources
from headway.model.yamlload import Document

__all__ = ["EMPTY_RENDER", "check_empty_renders"]

EMPTY_RENDER = Rule(
    id="HW324",
    slug="empty-render",
    severity=Severity.WARNING,
    title="An Application whose sources render no object",
    rationale="An empty render syncs to Synced and Healthy with nothing deployed: the add-ons "
    "a values block meant to enable, under a key the chart does not read, are simply absent, "
    "and nothing says so.",
    hint="Check the values against the keys the chart's templates read (`helm template` with "
    "them), the source path, and the directory include/exclude; an Application meant to be "
    "empty can say `headway.dev/check-disable` with the reason.",
)


def check_empty_renders(ctx: CheckContext) -> Iterable[Finding]:
    unresolved = {id(u.app) for u in ctx.unresolved}
    broken = {problem.file for problem in ctx.load_problems}
    for unit, app in ctx.application_documents():
        if unit.objects or id(app) in unresolved or _reads_broken_files(app, broken):
            continue
        yield finding_at(
            EMPTY_RENDER,
            app,
            path=("spec",),
            message=f"Application/{app.name} renders no object: a sync deploys nothing and "
            "reads Synced and Healthy (values that enable nothing, templates that are all "
            "conditional, or a path with no manifest)",
            app=unit.name,
        )


def _reads_broken_files(app: Document, broken: set[str]) -> bool:
    """Whether a source path of `app` holds a file that is HW003 already (YAML that does not
    load): its render is empty because that file is broken, which HW003 says at its line."""
    paths = [str(source.get("path") or "").strip("/") for source in app_sources(app.obj)]
    prefixes = [f"{path.removeprefix('./')}/" for path in paths if path not in ("", ".")]
    return any(file.startswith(prefix) for file in broken for prefix in prefixes)
