"""Transition states: what the cluster renders between two merges that each own half a change.

Seed 002 §5.4, "two merges": a PR moved keys from values-prod.yaml into a new
values-common.yaml and added that file to the Application's valueFiles. Git content changed
at merge, the Application spec minutes later; for six minutes a required env var belonged to
no file the Application was reading. Both end states were fine. So for an Application whose
spec and content both change, the two intermediate states (new spec + old content, old spec +
new content) are rendered by the CLI and compared here with the end states.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.manifest import as_dict, name_of, namespace_of
from headway.model.yamlload import Document

__all__ = [
    "TRANSITION_DROPS",
    "TRANSITION_HIDDEN_CHANGE",
    "TransitionStates",
    "flatten",
    "transition_problems",
]

TRANSITION_DROPS = Rule(
    id="HW401",
    slug="transition-drops-key",
    severity=Severity.ERROR,
    title="A key or resource present before and after a change is missing in between",
    rationale="Seed 002 §5.4: a values key moved between files while the valueFiles list "
    "changed in another system; for six minutes a required env var was in no file the "
    "Application read, and the service crash-looped in prod.",
    hint="Split the change in two merges: first add the new file and the spec change with "
    "the keys duplicated (a no-op render), then remove the old keys.",
)
TRANSITION_HIDDEN_CHANGE = Rule(
    id="HW402",
    slug="transition-hidden-change",
    severity=Severity.WARNING,
    title="The end states render the same, but a state in between does not",
    rationale="Seed 002 §5.4: a clean plan and an empty Helm diff are not evidence of safety; "
    "end-state diffs are blind to the order in which two systems apply their halves.",
    hint="Make each merge a safe state on its own (expand first, contract later).",
)

ResourceKey = tuple[str, str, str]


@dataclass(frozen=True)
class TransitionStates:
    """The renders of one Application: both end states and the two orders in between."""

    application: Document
    before: Sequence[Document]  # old spec, old content
    after: Sequence[Document]  # new spec, new content
    # New spec with old content, old spec with new content; None when that state does not
    # render (a missing values file): Argo CD then fails the sync and keeps the last state.
    spec_first: Sequence[Document] | None
    content_first: Sequence[Document] | None


def _key(doc: Document) -> ResourceKey:
    return doc.kind, namespace_of(doc.obj), name_of(doc.obj)


def _item_label(item: Any, index: int) -> str:
    """List items named by `name` (containers, env vars, ports) keep their identity by name."""
    if isinstance(item, dict) and isinstance(item.get("name"), str):
        return f"[name={item['name']}]"
    return f"[{index}]"


def flatten(value: Any, prefix: str = "") -> Iterator[str]:
    """Every leaf path of an object: `spec.template.spec.containers[name=web].env[name=DB]`."""
    if isinstance(value, dict) and value:
        for key, child in value.items():
            yield from flatten(child, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and value:
        for index, child in enumerate(value):
            yield from flatten(child, prefix + _item_label(child, index))
    else:
        yield prefix


def _index(docs: Sequence[Document]) -> dict[ResourceKey, Document]:
    return {_key(d): d for d in docs}


def _paths(doc: Document) -> set[str]:
    return set(flatten(as_dict(doc.obj)))


def transition_problems(states: TransitionStates) -> list[Finding]:
    before, after = _index(states.before), _index(states.after)
    app = states.application
    findings: list[Finding] = []
    middles = {
        "the spec applied before the content (new spec, old content)": states.spec_first,
        "the content merged before the spec (old spec, new content)": states.content_first,
    }
    rendered = {label: _index(docs) for label, docs in middles.items() if docs is not None}
    for label, middle in rendered.items():
        findings.extend(_dropped(app, before, after, middle, label))
    hidden = any(not _same(before, m) for m in rendered.values())
    if hidden and _same(before, after):
        findings.append(
            finding_at(
                TRANSITION_HIDDEN_CHANGE,
                app,
                path=("spec",),
                message=f"Application/{app.name} renders the same before and after this range, "
                "but not in between: the end-state diff is empty while the cluster passes "
                "through a state neither commit describes",
                app=app.name,
            )
        )
    return findings


def _same(a: Mapping[ResourceKey, Document], b: Mapping[ResourceKey, Document]) -> bool:
    return a.keys() == b.keys() and all(a[k].obj == b[k].obj for k in a)


def _dropped(
    app: Document,
    before: Mapping[ResourceKey, Document],
    after: Mapping[ResourceKey, Document],
    middle: Mapping[ResourceKey, Document],
    label: str,
) -> Iterator[Finding]:
    for key in sorted(before.keys() & after.keys()):
        resource = "/".join(part for part in key if part)
        if key not in middle:
            yield _drop_finding(
                app,
                resource,
                f"{resource} exists before and after, but with {label} it "
                "is not rendered at all: a sync in that window deletes it (prune) "
                "or leaves it stale",
            )
            continue
        missing = {
            _item(path) for path in (_paths(before[key]) & _paths(after[key])) - _paths(middle[key])
        }
        if missing:
            shown = ", ".join(sorted(missing)[:5]) + (" ..." if len(missing) > 5 else "")
            yield _drop_finding(
                app,
                resource,
                f"{resource} has {shown} before and after, but not with "
                f"{label}: the cluster runs without it until the second half "
                "lands",
            )


def _item(path: str) -> str:
    """`...env[name=KEY].value` -> `...env[name=KEY]`: name the list item, not its fields."""
    cut = path.rfind("[name=")
    return path[: path.index("]", cut) + 1] if cut >= 0 else path


def _drop_finding(app: Document, resource: str, message: str) -> Finding:
    finding = finding_at(TRANSITION_DROPS, app, path=("spec",), message=message, app=app.name)
    return replace(finding, resource=resource)
