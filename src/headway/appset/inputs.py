"""What generators read from outside the ApplicationSet, as a narrow protocol. Pure.

The controller implements `Inputs` over the Git cache and the store's cluster Secrets;
`headway check` over the checked-out tree; tests over dicts. A read that fails raises
`InputError`, and generation stops on it: a failed listing is never read as "no
directories", which would delete every generated Application.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "IN_CLUSTER_NAME",
    "IN_CLUSTER_SERVER",
    "ClusterSecret",
    "ConfigMapKeyRef",
    "ForgeRefused",
    "ForgeTls",
    "InputError",
    "InputUnavailable",
    "Inputs",
    "OpenPullRequest",
    "PluginQuery",
    "PullRequestQuery",
    "RunTimeOnly",
    "ScmQuery",
    "ScmRepository",
    "SecretKeyRef",
    "StaticInputs",
    "directories_of",
]

IN_CLUSTER_NAME = "in-cluster"
IN_CLUSTER_SERVER = "https://kubernetes.default.svc"


class InputError(RuntimeError):
    """An input could not be read (a repository that cannot be fetched, a missing revision)."""


class ForgeRefused(InputError):
    """A forge call the operator's policy refuses (`headway.appset.forge_policy`), raised
    before any Secret value is read or any request is made; `field` is the generator field
    to blame, under the generator's kind (`("github", "api")`)."""

    def __init__(self, field: tuple[str, ...], message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class InputUnavailable(InputError):
    """An input the reader does not have at all (`headway validate` reads no repository)."""


class RunTimeOnly(InputUnavailable):
    """An input that exists only while the controller runs (open pull requests, a plugin
    service's answer, cluster resources): no reader of a repository can ever have it."""


@dataclass(frozen=True)
class ClusterSecret:
    """An Argo CD cluster Secret (`argocd.argoproj.io/secret-type: cluster`) as generators see
    it: its `name`, `server` and `project` data and its own labels and annotations."""

    name: str
    server: str
    project: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SecretKeyRef:
    """A `{secretName, key}` reference to a Secret of the ApplicationSet's namespace."""

    secret_name: str
    key: str


@dataclass(frozen=True)
class ConfigMapKeyRef:
    """A `{configMapName, key}` reference to a ConfigMap of the ApplicationSet's namespace."""

    config_map_name: str
    key: str


@dataclass(frozen=True)
class ForgeTls:
    """How a forge's certificate is checked: `insecure` skips it; `ca_ref` names PEM
    certificates trusted besides the system's (GitLab's `insecure` and `caRef`)."""

    insecure: bool = False
    ca_ref: ConfigMapKeyRef | None = None


@dataclass(frozen=True)
class PullRequestQuery:
    """The pull requests of one repository: the open ones of `owner`/`repo` (GitHub, Gitea),
    or the merge requests of GitLab's `project` (in `state`, carrying every one of `labels`)."""

    owner: str
    repo: str
    api: str = ""  # empty: the forge's public API; otherwise its self-hosted URL
    token_ref: SecretKeyRef | None = None
    continue_on_not_found: bool = False  # a repository the forge does not know: none
    provider: str = "github"
    project: str = ""  # GitLab: the project's id or full path
    labels: tuple[str, ...] = ()  # GitLab: sent to the API, which filters
    state: str = ""  # GitLab: opened, closed, merged, locked; empty: every state
    tls: ForgeTls = ForgeTls()

    @property
    def repository(self) -> str:
        """The repository as messages name it."""
        return self.project if self.provider == "gitlab" else f"{self.owner}/{self.repo}"


@dataclass(frozen=True)
class OpenPullRequest:
    """One open pull request as the generator reads it."""

    number: int
    title: str
    branch: str
    target_branch: str
    head_sha: str
    author: str
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScmQuery:
    """The repositories of one GitHub organization, GitLab group or Gitea owner (the
    scmProvider generator); `organization` holds the group's id or full path for GitLab."""

    organization: str
    api: str = ""  # empty: the forge's public API; otherwise its self-hosted URL
    token_ref: SecretKeyRef | None = None
    all_branches: bool = False  # every branch, not only the default one
    clone_protocol: str = "ssh"  # which URL `url` is: ssh_url or clone_url (https)
    provider: str = "github"
    include_subgroups: bool = False  # GitLab: the projects of subgroups too
    include_shared: bool = True  # GitLab: projects shared with the group too
    include_archived: bool = False  # GitLab: Argo CD's includeArchivedRepos (archived=true)
    exclude_archived: bool = False  # Gitea: leave archived repositories out
    topic: str = ""  # GitLab: only projects with this topic
    tls: ForgeTls = ForgeTls()


@dataclass(frozen=True)
class ScmRepository:
    """One repository, or one branch of it once branches are read (`sha` then set)."""

    organization: str
    repository: str
    url: str
    branch: str
    repository_id: int
    labels: tuple[str, ...] = ()  # the repository's topics
    sha: str = ""


@dataclass(frozen=True)
class PluginQuery:
    """One plugin generator call: the ConfigMap naming the service (`baseUrl`, `token`,
    `requestTimeout`), the set asking, and its `input.parameters` as canonical JSON."""

    config_map: str
    appset_name: str
    input_json: str = "{}"


class Inputs(Protocol):
    def clusters(self) -> Sequence[ClusterSecret]:
        """Every cluster Secret of the controller's namespace."""
        ...

    def directories(self, repo_url: str, revision: str) -> Sequence[str]:
        """Every directory of the repository at `revision`, hidden ones left out."""
        ...

    def files(self, repo_url: str, revision: str) -> Sequence[str]:
        """Every file path of the repository at `revision`."""
        ...

    def read(self, repo_url: str, revision: str, path: str) -> bytes:
        """One file's content."""
        ...

    def pull_requests(self, query: PullRequestQuery) -> Sequence[OpenPullRequest]:
        """The open pull requests of the repository, in the forge's order."""
        ...

    def scm_repositories(self, query: ScmQuery) -> Sequence[ScmRepository]:
        """The organization's repositories, each on its default branch (no `sha` yet)."""
        ...

    def scm_branches(self, query: ScmQuery, repo: ScmRepository) -> Sequence[ScmRepository]:
        """The repository's default branch (or every branch with `all_branches`), with the
        commit each points at; none for an empty repository."""
        ...

    def scm_has_path(self, query: ScmQuery, repo: ScmRepository, path: str) -> bool:
        """Whether `path` exists on the branch `repo` names."""
        ...

    def plugin_parameters(self, query: PluginQuery) -> Sequence[Mapping[str, Any]]:
        """The plugin's `output.parameters`: one mapping per parameter set."""
        ...

    def config_map(self, name: str) -> Mapping[str, str]:
        """The `data` of a ConfigMap of the controller's namespace."""
        ...

    def resources(self, api_version: str, kind: str) -> Sequence[Mapping[str, Any]]:
        """Every object of a kind in the controller's namespace."""
        ...


def directories_of(files: Iterable[str]) -> list[str]:
    """The directories holding `files`, sorted, without hidden ones and what is under them
    (Argo CD's repo server skips directories whose name starts with a dot)."""
    found: set[str] = set()
    for path in files:
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            if parts[depth - 1].startswith("."):
                break
            found.add("/".join(parts[:depth]))
    return sorted(found)


@dataclass(frozen=True)
class StaticInputs:
    """Inputs from values: cluster Secrets, and per repository URL a {path: content} map
    (directories are derived from the file paths). A repository not given is an
    `InputError`, as an unreachable one would be."""

    cluster_secrets: tuple[ClusterSecret, ...] = ()
    repositories: Mapping[str, Mapping[str, bytes]] = field(default_factory=dict)
    pulls: Mapping[tuple[str, str], tuple[OpenPullRequest, ...]] = field(default_factory=dict)
    plugins: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)
    config_maps: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    objects: Mapping[tuple[str, str], tuple[Mapping[str, Any], ...]] = field(default_factory=dict)
    # Said after "repository ... is not available": where the caller's user finds it instead.
    unavailable_hint: str = ""

    def clusters(self) -> Sequence[ClusterSecret]:
        return self.cluster_secrets

    def _repo(self, repo_url: str) -> Mapping[str, bytes]:
        if repo_url not in self.repositories:
            hint = f": {self.unavailable_hint}" if self.unavailable_hint else ""
            raise InputUnavailable(f"repository {repo_url!r} is not available{hint}")
        return self.repositories[repo_url]

    def directories(self, repo_url: str, revision: str) -> Sequence[str]:
        return directories_of(self._repo(repo_url))

    def files(self, repo_url: str, revision: str) -> Sequence[str]:
        return sorted(self._repo(repo_url))

    def read(self, repo_url: str, revision: str, path: str) -> bytes:
        return self._repo(repo_url)[path]

    def pull_requests(self, query: PullRequestQuery) -> Sequence[OpenPullRequest]:
        key = (query.owner, query.repo)
        if key not in self.pulls:
            raise RunTimeOnly(f"pull requests of {query.repository} are not available")
        return self.pulls[key]

    def scm_repositories(self, query: ScmQuery) -> Sequence[ScmRepository]:
        raise RunTimeOnly(f"the repositories of {query.organization} are not available")

    def scm_branches(self, query: ScmQuery, repo: ScmRepository) -> Sequence[ScmRepository]:
        raise RunTimeOnly(f"branches of {repo.organization}/{repo.repository} are not available")

    def scm_has_path(self, query: ScmQuery, repo: ScmRepository, path: str) -> bool:
        raise RunTimeOnly(f"files of {repo.organization}/{repo.repository} are not available")

    def plugin_parameters(self, query: PluginQuery) -> Sequence[Mapping[str, Any]]:
        if query.config_map not in self.plugins:
            raise RunTimeOnly(f"plugin {query.config_map!r} is not available")
        return self.plugins[query.config_map]

    def config_map(self, name: str) -> Mapping[str, str]:
        if name not in self.config_maps:
            raise RunTimeOnly(f"ConfigMap {name!r} is not available")
        return self.config_maps[name]

    def resources(self, api_version: str, kind: str) -> Sequence[Mapping[str, Any]]:
        if (api_version, kind) not in self.objects:
            raise RunTimeOnly(f"{kind}.{api_version} objects are not available")
        return self.objects[(api_version, kind)]
