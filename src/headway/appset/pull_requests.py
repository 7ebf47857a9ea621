"""The pullRequest generator's pure half: its spec (`github`, `gitlab` or `gitea`) read into a
`PullRequestQuery`, the `filters` applied, and each pull request turned into Argo CD's
parameters (applicationset/generators/pull_request.go). The listing itself is an `Inputs`
call.

GitHub: the open pull requests of `owner`/`repo`; `labels` and `excludedLabels` are decided
here. Gitea: the same, with `labels` only. GitLab: the merge requests of `project` in
`pullRequestState` (every state when it is empty, as in Argo CD); `labels` go to GitLab,
which lists only merge requests carrying each.

Parameters: number, title, branch, branch_slug, target_branch, target_branch_slug,
head_sha, head_short_sha (8 characters), head_short_sha_7, author; and labels with goTemplate
only, as in Argo CD.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.appset.inputs import (
    ConfigMapKeyRef,
    ForgeTls,
    OpenPullRequest,
    PullRequestQuery,
    SecretKeyRef,
)

__all__ = [
    "DEFAULT_REQUEUE_SECONDS",
    "LabelRule",
    "PullRequestFilter",
    "SpecError",
    "filters_of",
    "flag",
    "forge_tls",
    "label_rule_of",
    "matching",
    "params_of",
    "query_of",
    "slug",
]

DEFAULT_REQUEUE_SECONDS = 30 * 60  # Argo CD's DefaultPullRequestRequeueAfter
SLUG_MAX_LENGTH = 50  # room for 13 more characters within a 63-character DNS label
OTHER_PROVIDERS = ("bitbucketServer", "bitbucket", "azuredevops")
GITLAB_STATES = ("opened", "closed", "merged", "locked", "all")
_NOT_ALLOWED = re.compile(r"[^a-z0-9\-_]+")
_DASHES = re.compile(r"-+")
_SUBSTITUTIONS = {"_": "-", "&": "and", "@": "at", '"': "", "'": "", "\u2019": ""}


class SpecError(ValueError):
    """A malformed generator field: `field` is its path under the generator."""

    def __init__(self, field: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class PullRequestFilter:
    """One `filters` entry; a pull request passes when it matches every regexp given."""

    branch: re.Pattern[str] | None
    target_branch: re.Pattern[str] | None

    def matches(self, pull: OpenPullRequest) -> bool:
        if self.branch is not None and not self.branch.search(pull.branch):
            return False
        return self.target_branch is None or bool(self.target_branch.search(pull.target_branch))


def query_of(spec: Mapping[str, Any]) -> PullRequestQuery:
    """The repository (GitHub) or project (GitLab) a pullRequest spec lists, and how."""
    other = next((p for p in OTHER_PROVIDERS if p in spec), None)
    if other is not None:
        message = f"the {other} provider is not supported by Headway; use github, gitlab or gitea"
        raise SpecError((other,), message)
    if "gitlab" in spec and "github" not in spec:
        return _gitlab_query(spec)
    if "gitea" in spec and "github" not in spec:
        return _gitea_query(spec)
    github = spec.get("github")
    if not isinstance(github, Mapping):
        message = "a pullRequest generator needs a github, gitlab or gitea provider"
        raise SpecError(("github",), message)
    if github.get("appSecretName"):
        raise SpecError(
            ("github", "appSecretName"), "GitHub App authentication is not supported; use tokenRef"
        )
    for field in ("owner", "repo"):
        if not isinstance(github.get(field), str) or not github[field]:
            raise SpecError(("github", field), f"{field} is required")
    return PullRequestQuery(
        owner=github["owner"],
        repo=github["repo"],
        api=str(github.get("api") or ""),
        token_ref=secret_ref(github.get("tokenRef"), ("github", "tokenRef")),
        continue_on_not_found=spec.get("continueOnRepoNotFoundError") is True,
    )


def _gitlab_query(spec: Mapping[str, Any]) -> PullRequestQuery:
    gitlab = spec["gitlab"]
    if not isinstance(gitlab, Mapping):
        raise SpecError(("gitlab",), "gitlab must be a mapping")
    project = gitlab.get("project")
    if not isinstance(project, str | int) or isinstance(project, bool) or project == "":
        raise SpecError(("gitlab", "project"), "project is required (its id or full path)")
    labels = gitlab.get("labels") or []
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise SpecError(("gitlab", "labels"), "labels must be a list of strings")
    state = gitlab.get("pullRequestState") or ""
    if state and state not in GITLAB_STATES:
        known = ", ".join(GITLAB_STATES)
        raise SpecError(("gitlab", "pullRequestState"), f"unknown state {state!r} ({known})")
    return PullRequestQuery(
        owner="",
        repo="",
        provider="gitlab",
        project=str(project),
        api=str(gitlab.get("api") or ""),
        token_ref=secret_ref(gitlab.get("tokenRef"), ("gitlab", "tokenRef")),
        labels=tuple(labels),
        state=str(state),
        tls=forge_tls(gitlab, "gitlab"),
        continue_on_not_found=spec.get("continueOnRepoNotFoundError") is True,
    )


def _gitea_query(spec: Mapping[str, Any]) -> PullRequestQuery:
    """A Gitea repository's open pull requests; `api` is required (no public Gitea)."""
    gitea = spec["gitea"]
    if not isinstance(gitea, Mapping):
        raise SpecError(("gitea",), "gitea must be a mapping")
    for key in ("owner", "repo", "api"):
        if not isinstance(gitea.get(key), str) or not gitea[key]:
            raise SpecError(("gitea", key), f"{key} is required")
    return PullRequestQuery(
        owner=gitea["owner"],
        repo=gitea["repo"],
        provider="gitea",
        api=gitea["api"],
        token_ref=secret_ref(gitea.get("tokenRef"), ("gitea", "tokenRef")),
        tls=ForgeTls(insecure=flag(gitea, "insecure", ("gitea", "insecure"))),
        continue_on_not_found=spec.get("continueOnRepoNotFoundError") is True,
    )


def flag(raw: Mapping[str, Any], key: str, field: tuple[str | int, ...]) -> bool:
    """A true/false field, False when absent."""
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise SpecError(field, f"{key} must be true or false")
    return value


def forge_tls(raw: Mapping[str, Any], provider: str) -> ForgeTls:
    """A provider's `insecure` and `caRef` (`{configMapName, key}`)."""
    insecure = flag(raw, "insecure", (provider, "insecure"))
    ca = raw.get("caRef")
    if ca is None:
        return ForgeTls(insecure=insecure)
    if not isinstance(ca, Mapping) or not ca.get("configMapName") or not ca.get("key"):
        raise SpecError((provider, "caRef"), "a caRef needs configMapName and key")
    return ForgeTls(insecure, ConfigMapKeyRef(str(ca["configMapName"]), str(ca["key"])))


@dataclass(frozen=True)
class LabelRule:
    """`labels`: a pull request must carry every one; `excludedLabels`: none of them."""

    required: frozenset[str]
    excluded: frozenset[str]

    def passes(self, pull: OpenPullRequest) -> bool:
        have = set(pull.labels)
        return self.required <= have and not self.excluded & have


def label_rule_of(spec: Mapping[str, Any]) -> LabelRule:
    """GitHub's label rule, Gitea's (`labels` only); none for GitLab, whose API filters by
    `labels` itself."""
    provider = "gitea" if "gitea" in spec and "github" not in spec else "github"
    github = spec.get(provider) or {}
    found: dict[str, frozenset[str]] = {}
    keys = ("labels",) if provider == "gitea" else ("labels", "excludedLabels")
    for key in keys:
        labels = github.get(key) or []
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise SpecError((provider, key), f"{key} must be a list of strings")
        found[key] = frozenset(labels)
    return LabelRule(found["labels"], found.get("excludedLabels", frozenset()))


def secret_ref(raw: Any, field: tuple[str | int, ...]) -> SecretKeyRef | None:
    """A `{secretName, key}` reference, or None when absent."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or not raw.get("secretName") or not raw.get("key"):
        raise SpecError(field, "a secret reference needs secretName and key")
    return SecretKeyRef(str(raw["secretName"]), str(raw["key"]))


def filters_of(spec: Mapping[str, Any]) -> list[PullRequestFilter]:
    raw = spec.get("filters") or []
    if not isinstance(raw, list):
        raise SpecError(("filters",), "filters must be a list")
    return [_filter(entry, index) for index, entry in enumerate(raw)]


def _filter(entry: Any, index: int) -> PullRequestFilter:
    if not isinstance(entry, Mapping):
        raise SpecError(("filters", index), "a filter must be a mapping")
    compiled: dict[str, re.Pattern[str] | None] = {}
    for key in ("branchMatch", "targetBranchMatch"):
        text = entry.get(key)
        try:
            compiled[key] = None if text is None else re.compile(str(text))
        except re.error as err:
            raise SpecError(("filters", index, key), f"not a regular expression: {err}") from None
    return PullRequestFilter(compiled["branchMatch"], compiled["targetBranchMatch"])


def matching(
    pulls: Sequence[OpenPullRequest], *, labels: LabelRule, filters: Sequence[PullRequestFilter]
) -> list[OpenPullRequest]:
    """The pull requests the label rule passes and any one filter passes (every filter
    passes when there is none)."""
    chosen = [p for p in pulls if labels.passes(p)]
    if not filters:
        return chosen
    return [p for p in chosen if any(f.matches(p) for f in filters)]


def slug(text: str) -> str:
    """`text` as gosimple/slug makes it with Argo CD's settings: lower case ASCII letters,
    digits and dashes, underscores as dashes, at most 50 characters cut at a dash when one
    is there (non-ASCII letters lose their accents; others are dropped)."""
    out = text.strip()
    for old, new in _SUBSTITUTIONS.items():
        out = out.replace(old, new)
    out = unicodedata.normalize("NFKD", out).encode("ascii", "ignore").decode().lower()
    out = _DASHES.sub("-", _NOT_ALLOWED.sub("-", out)).strip("-_")
    if len(out) <= SLUG_MAX_LENGTH:
        return out
    cut = out.rfind("-", 0, SLUG_MAX_LENGTH + 1)
    return out[:cut] if cut >= 0 else out[:SLUG_MAX_LENGTH]


def params_of(pull: OpenPullRequest, *, go_template: bool) -> dict[str, Any]:
    params: dict[str, Any] = {
        "number": str(pull.number),
        "title": pull.title,
        "branch": pull.branch,
        "branch_slug": slug(pull.branch),
        "target_branch": pull.target_branch,
        "target_branch_slug": slug(pull.target_branch),
        "head_sha": pull.head_sha,
        "head_short_sha": pull.head_sha[:8],
        "head_short_sha_7": pull.head_sha[:7],
        "author": pull.author,
    }
    if go_template:
        params["labels"] = list(pull.labels)
    return params
