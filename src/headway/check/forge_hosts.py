"""Forge APIs the controller refuses by default: an ApplicationSet's pullRequest or
scmProvider generator, or a PromotionPipeline's `spec.forge.github.apiURL`.

The controller sends a pullRequest or scmProvider generator's token only to the public GitHub
and GitLab APIs unless its operator allows more (`headway serve --allowed-scm-providers`,
docs/applicationset.md). A set or pipeline naming another API works only where the operator did
that: say so at the field, before it reaches a controller that refuses it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from headway.appset.forge_policy import ForgePolicy
from headway.check.context import CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.manifest import as_dict, as_list
from headway.model.yamlload import Document

__all__ = ["FORGE_HOST_NOT_ALLOWED", "check_forge_hosts"]

FORGE_KINDS = ("pullRequest", "scmProvider")
PROVIDERS = ("github", "gitlab", "gitea")
PathPart = str | int

FORGE_HOST_NOT_ALLOWED = Rule(
    id="HW320",
    slug="forge-host-not-allowed-by-default",
    severity=Severity.WARNING,
    title="A pullRequest or scmProvider generator, or a promotion pipeline's forge, calls an "
    "API the controller refuses by default",
    rationale="Whoever commits an ApplicationSet or a PromotionPipeline chooses where its forge "
    "token is sent, so the controller sends it only to the public GitHub and GitLab APIs unless "
    "the operator lists more hosts; one naming another host fails on a controller that was not "
    "told.",
    hint="Ask the operator to run `headway serve --allowed-scm-providers <this URL>` (and to "
    "label the token's Secret `argocd.argoproj.io/secret-type: scm-creds`); or fix the URL "
    "if it is not your GitHub Enterprise or GitLab.",
)


def check_forge_hosts(ctx: CheckContext) -> Iterable[Finding]:
    policy = ForgePolicy()
    for doc in ctx.objects_of_kind("ApplicationSet"):
        generators = as_dict(as_dict(doc.obj).get("spec")).get("generators")
        for path, api in _forge_apis(generators, ("spec", "generators")):
            yield from _judged(doc, path, api, policy, provider=str(path[-2]))
    for doc in ctx.objects_of_kind("PromotionPipeline"):
        forge = as_dict(as_dict(as_dict(doc.obj).get("spec")).get("forge"))
        url = as_dict(forge.get("github")).get("apiURL")
        if isinstance(url, str) and url:
            yield from _judged(doc, ("spec", "forge", "github", "apiURL"), url, policy)


def _judged(
    doc: Document,
    path: tuple[PathPart, ...],
    api: str,
    policy: ForgePolicy,
    *,
    provider: str = "github",
) -> Iterator[Finding]:
    refusal = policy.api_refusal(api, provider)
    if refusal is not None:
        message = f"{_field_text(path)}: with the default serve flags, {refusal}"
        yield finding_at(FORGE_HOST_NOT_ALLOWED, doc, path=path, message=message)


def _forge_apis(
    generators: Any, at: tuple[PathPart, ...]
) -> Iterator[tuple[tuple[PathPart, ...], str]]:
    """Each forge generator's `github.api`, `gitlab.api` or `gitea.api` (matrix and merge
    children included) and where."""
    for index, generator in enumerate(as_list(generators)):
        entry = as_dict(generator)
        for kind in ("matrix", "merge"):
            nested = as_dict(entry.get(kind)).get("generators")
            yield from _forge_apis(nested, (*at, index, kind, "generators"))
        for kind in FORGE_KINDS:
            for provider in PROVIDERS:
                api = as_dict(as_dict(entry.get(kind)).get(provider)).get("api")
                if isinstance(api, str) and api:
                    yield (*at, index, kind, provider, "api"), api


def _field_text(path: tuple[PathPart, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
