"""An ApplicationSet document rendered into Application documents for `headway validate`
and `headway check`. Pure.

Each generated Application becomes a `Document` whose field lines are those of the template
it came from, so a problem in a generated Application is reported at the template's file
and line; a generation error is one diagnostic at the failing field of the set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from headway.appset.inputs import Inputs
from headway.model.applicationset import parse_application_set
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document

__all__ = [
    "Rendered",
    "is_application_set",
    "once_per_template",
    "render_document",
    "render_documents",
]

NOT_RENDERED = "not rendered:"
RUN_TIME_ONLY = (
    "the Applications this generator makes exist only at run time and are not checked here"
)
# A clusters generator reads the cluster Secrets Argo CD holds; most are registered at run time
# (`argocd cluster add`, Terraform), so a checkout holding none that match generates nothing:
# an info for validate and `appset generate` (nothing wrong), HW004 for check (nothing checked).
NO_CLUSTER = (
    "generated no Application from this checkout: its clusters generator reads the cluster "
    "Secrets Argo CD holds, and this repository holds none that it selects (or another "
    "generator combined with it gave nothing); the Applications it makes for the clusters "
    "registered at run time are not checked here"
)


@dataclass(frozen=True)
class Rendered:
    """The generated Applications; the problems; and, apart, the warnings for sets whose
    generators read what only the running controller has (`headway check`'s HW004)."""

    applications: tuple[Document, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    run_time_only: tuple[Diagnostic, ...] = ()


def is_application_set(document: Document) -> bool:
    obj = document.obj
    return (
        isinstance(obj, dict)
        and obj.get("kind") == "ApplicationSet"
        and str(obj.get("apiVersion", "")).startswith("argoproj.io/")
    )


def render_document(
    document: Document, inputs: Inputs, *, missing_inputs: Severity = Severity.ERROR
) -> Rendered:
    """The Applications `document` generates from `inputs`, or the diagnostic of why not.
    An input that is not available (a repository not at hand) is reported at
    `missing_inputs` severity: `headway validate` has no repositories and says so. An input
    only the running controller has (open pull requests, a plugin service, cluster
    resources) is a warning in both: no repository or mapping could supply it."""
    # Here, not at the top: a repository without ApplicationSets (most `headway check` runs)
    # asks only `is_application_set`, and the generators are a third of the loader's imports.
    from headway.appset.generate import generate

    generation = generate(document.obj, inputs)
    if generation.error is not None:
        error = generation.error
        severity = missing_inputs if error.unavailable else Severity.ERROR
        message = f"{NOT_RENDERED} {error.message}" if error.unavailable else error.message
        if error.run_time_only:  # no mapping or checkout could supply it: not the user's fault
            note = document.diagnostic(error.path, f"{message}; {RUN_TIME_ONLY}", Severity.WARNING)
            return Rendered(run_time_only=(note,))
        return Rendered(diagnostics=(document.diagnostic(error.path, message, severity),))
    apps = tuple(document.derived(app.manifest, app.template_path) for app in generation.apps)
    if not apps and _reads_clusters(document.obj):
        note = document.diagnostic(("spec", "generators"), NO_CLUSTER, Severity.INFO)
        return Rendered(run_time_only=(note,))
    return Rendered(applications=apps)


def _reads_clusters(obj: object) -> bool:
    """Whether a set's generators (or those nested in a matrix or merge) include `clusters`."""
    spec = obj.get("spec") if isinstance(obj, dict) else None
    pending = list(spec.get("generators") or []) if isinstance(spec, dict) else []
    while pending:
        generator = pending.pop()
        if not isinstance(generator, dict):
            continue
        if "clusters" in generator:
            return True
        for combined in ("matrix", "merge"):
            block = generator.get(combined)
            if isinstance(block, dict) and isinstance(block.get("generators"), list):
                pending.extend(block["generators"])
    return False


def render_documents(
    documents: Sequence[Document], inputs: Inputs, *, missing_inputs: Severity
) -> Rendered:
    """Every ApplicationSet among `documents` rendered (those whose own fields are valid:
    `headway validate` reports the others); the Applications, then the problems."""
    apps: list[Document] = []
    problems: list[Diagnostic] = []
    live: list[Diagnostic] = []
    for document in documents:
        if not is_application_set(document):
            continue
        _, diagnostics = parse_application_set(document)
        if any(d.severity is Severity.ERROR for d in diagnostics):
            continue
        rendered = render_document(document, inputs, missing_inputs=missing_inputs)
        apps.extend(rendered.applications)
        problems.extend(rendered.diagnostics)
        live.extend(rendered.run_time_only)
    return Rendered(tuple(apps), tuple(problems), tuple(live))


def once_per_template(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """One diagnostic per template field and message: every Application rendered from one
    template repeats the same problem."""
    seen: set[tuple[str, int, str, str]] = set()
    out: list[Diagnostic] = []
    for diagnostic in diagnostics:
        key = (diagnostic.file, diagnostic.line, diagnostic.field, diagnostic.message)
        if key not in seen:
            seen.add(key)
            out.append(diagnostic)
    return out
