"""The ApplicationSet generators' inputs read from the world: cluster Secrets from the
store and repository trees from the Git cache (`headway.appset.inputs.Inputs`).

One `StepInputs` serves one reconcile: each repository is fetched at most once per poll
interval and its tree read once per step, so a set with a matrix of git generators reads a
revision once. A Git failure is an `InputError`: generation stops and no Application changes.
A forge call (pullRequest, scmProvider) is first put to the operator's `ForgePolicy`: an API
URL or token Secret it refuses is `ForgeRefused`, before the Secret's value is read and before
any request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2

from headway.appset.forge_policy import DISABLED, ForgePolicy
from headway.appset.inputs import (
    ClusterSecret,
    ForgeRefused,
    ForgeTls,
    InputError,
    OpenPullRequest,
    PluginQuery,
    PullRequestQuery,
    RunTimeOnly,
    ScmQuery,
    ScmRepository,
    directories_of,
)
from headway.clock import Clock
from headway.cluster.cluster_secrets import ClusterSecretError, parse_cluster_secret
from headway.cluster.errors import ClusterError
from headway.cluster.protocol import Cluster
from headway.controllers.appset.plugins import plugin_parameters
from headway.controllers.appset.scm import list_pull_requests, secret_token
from headway.controllers.appset.scm_gitea import ScmGitea, list_gitea_pull_requests
from headway.controllers.appset.scm_gitlab import ScmGitLab, list_merge_requests
from headway.controllers.appset.scm_repos import ScmGitHub
from headway.source.errors import SourceError
from headway.source.git import GitCache
from headway.source.tree import TreeReader

__all__ = ["CLUSTER_SECRET_SELECTOR", "FetchTimes", "StepInputs", "TreeInputs", "cluster_secrets"]

log = logging.getLogger(__name__)

CLUSTER_SECRET_SELECTOR = "argocd.argoproj.io/secret-type=cluster"


def cluster_secrets(cluster: Cluster, namespace: str) -> list[ClusterSecret]:
    """The Argo CD cluster Secrets of `namespace`, read as the cluster registry reads them
    (`headway.cluster.cluster_secrets`); one that registers no usable cluster is left out,
    as it registers no destination either."""
    try:
        found = cluster.list(
            "v1", "Secret", namespace=namespace, label_selector=CLUSTER_SECRET_SELECTOR
        )
    except ClusterError as err:
        raise InputError(f"cannot list cluster Secrets in {namespace}: {err}") from None
    out: list[ClusterSecret] = []
    for secret in found:
        try:
            parsed = parse_cluster_secret(secret)
        except ClusterSecretError as err:
            log.warning("cluster generator: %s", err)
            continue
        meta = secret.get("metadata") or {}
        out.append(
            ClusterSecret(
                name=parsed.name,
                server=parsed.server,
                project=parsed.project,
                labels=dict(meta.get("labels") or {}),
                annotations=dict(meta.get("annotations") or {}),
            )
        )
    return sorted(out, key=lambda c: c.name)


@dataclass
class TreeInputs:
    """Inputs over trees: `tree_for(url, revision)` answers a `TreeReader` or raises
    `InputError`; cluster Secrets are given. Used by `headway check` over a checkout."""

    tree_for: Callable[[str, str], TreeReader]
    secrets: Sequence[ClusterSecret] = ()
    _files: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def clusters(self) -> Sequence[ClusterSecret]:
        return self.secrets

    def _listing(self, repo_url: str, revision: str) -> list[str]:
        key = (repo_url, revision)
        if key not in self._files:
            try:
                self._files[key] = self.tree_for(repo_url, revision).files()
            except SourceError as err:
                raise InputError(f"cannot list {repo_url} at {revision}: {err}") from None
        return self._files[key]

    def directories(self, repo_url: str, revision: str) -> Sequence[str]:
        return directories_of(self._listing(repo_url, revision))

    def files(self, repo_url: str, revision: str) -> Sequence[str]:
        return self._listing(repo_url, revision)

    def read(self, repo_url: str, revision: str, path: str) -> bytes:
        try:
            return self.tree_for(repo_url, revision).read(path)
        except SourceError as err:
            raise InputError(f"cannot read {path} from {repo_url} at {revision}: {err}") from None

    def pull_requests(self, query: PullRequestQuery) -> Sequence[OpenPullRequest]:
        raise RunTimeOnly(
            f"pullRequest generator: the pull requests of {query.repository} are "
            "listed by the controller only"
        )

    def scm_repositories(self, query: ScmQuery) -> Sequence[ScmRepository]:
        raise RunTimeOnly(
            f"scmProvider generator: the repositories of {query.organization} are listed by "
            "the controller only"
        )

    def scm_branches(self, query: ScmQuery, repo: ScmRepository) -> Sequence[ScmRepository]:
        raise RunTimeOnly("scmProvider generator: branches are read by the controller only")

    def scm_has_path(self, query: ScmQuery, repo: ScmRepository, path: str) -> bool:
        raise RunTimeOnly("scmProvider generator: paths are read by the controller only")

    def config_map(self, name: str) -> Mapping[str, str]:
        raise RunTimeOnly(f"ConfigMap {name} is read by the controller only")

    def resources(self, api_version: str, kind: str) -> Sequence[Mapping[str, Any]]:
        raise RunTimeOnly(f"{kind} resources are read by the controller only")

    def plugin_parameters(self, query: PluginQuery) -> Sequence[Mapping[str, Any]]:
        raise RunTimeOnly(
            f"plugin generator: {query.config_map} is called by the controller only"
        )


_CRD_API = "apiextensions.k8s.io/v1"


_PULL_LISTINGS = {"gitlab": list_merge_requests, "gitea": list_gitea_pull_requests}
_SCM_FORGES: dict[str, type[ScmGitHub | ScmGitLab | ScmGitea]] = {
    "gitlab": ScmGitLab,
    "gitea": ScmGitea,
}


@dataclass
class FetchTimes:
    """When each repository was last fetched (the clock's monotonic time)."""

    last: dict[str, float] = field(default_factory=dict)


class StepInputs(TreeInputs):
    """The inputs of one reconcile: Git through the cache, Secrets through the store."""

    def __init__(
        self,
        *,
        cluster: Cluster,
        namespace: str,
        git: GitCache,
        clock: Clock,
        fetched: FetchTimes,
        poll_seconds: float,
        http: Callable[[], httpx2.Client],
        forge_policy: ForgePolicy,
        tls_http: Callable[[bool, str], httpx2.Client] | None = None,
    ) -> None:
        super().__init__(tree_for=self._tree)
        self._forge_policy = forge_policy
        self._cluster = cluster
        self._namespace = namespace
        self._git = git
        self._clock = clock
        self.fetched = fetched
        self._poll = poll_seconds
        self._trees: dict[tuple[str, str], TreeReader] = {}
        self._secrets: list[ClusterSecret] | None = None
        self.revisions: dict[str, str] = {}  # repository -> the commit each revision read
        self._http = http
        self._tls_http = tls_http
        self._pulls: dict[PullRequestQuery, list[OpenPullRequest]] = {}
        self._plugins: dict[PluginQuery, list[Mapping[str, Any]]] = {}
        self._forges: dict[ScmQuery, ScmGitHub | ScmGitLab | ScmGitea] = {}
        self._repos: dict[ScmQuery, list[ScmRepository]] = {}
        self._branches: dict[tuple[ScmQuery, ScmRepository], list[ScmRepository]] = {}
        self._paths: dict[tuple[ScmQuery, ScmRepository, str], bool] = {}

    def clusters(self) -> Sequence[ClusterSecret]:
        if self._secrets is None:
            self._secrets = cluster_secrets(self._cluster, self._namespace)
        return self._secrets

    def _tree(self, url: str, revision: str) -> TreeReader:
        key = (url, revision)
        if key not in self._trees:
            repo = self._git.repository(url)
            now = self._clock.monotonic()
            last = self.fetched.last.get(url)
            if last is None or now - last >= self._poll:
                repo.fetch()
                self.fetched.last[url] = now
            self._trees[key] = repo.tree(revision)
            self.revisions[f"{url}@{revision}"] = repo.resolve(revision)
        return self._trees[key]

    def _allowed(self, api: str, provider: str) -> None:
        """`ForgeRefused` unless the operator's policy lets a generator call `api`: asked
        before the token's Secret is read and before any request."""
        if not self._forge_policy.enabled:
            raise ForgeRefused((), DISABLED)
        refusal = self._forge_policy.api_refusal(api, provider)
        if refusal is not None:
            raise ForgeRefused((provider, "api"), refusal)

    def _token(self, query: PullRequestQuery | ScmQuery, generator: str) -> str:
        self._allowed(query.api, query.provider)
        return secret_token(
            self._cluster,
            namespace=self._namespace,
            ref=query.token_ref,
            generator=generator,
            policy=self._forge_policy,
            provider=query.provider,
        )

    def _client(self, tls: ForgeTls, generator: str) -> httpx2.Client:
        """The shared client, or one checking certificates as `tls` says (its `caRef`
        ConfigMap read from the control namespace)."""
        if tls == ForgeTls():
            return self._http()
        pem, where = "", f"{generator} generator: caRef"
        if tls.ca_ref is not None:
            ref = tls.ca_ref
            where = f"{where}: ConfigMap {self._namespace}/{ref.config_map_name}"
            try:
                data = self.config_map(ref.config_map_name)
            except InputError as err:
                raise InputError(f"{generator} generator: caRef: {err}") from None
            if ref.key not in data:
                raise InputError(f"{where} has no key {ref.key!r}")
            pem = data[ref.key]
        if self._tls_http is None:
            raise InputError(f"{where}: this controller makes no client with other certificates")
        try:
            return self._tls_http(tls.insecure, pem)
        except ValueError as err:
            raise InputError(f"{where}: {err}") from None

    def pull_requests(self, query: PullRequestQuery) -> Sequence[OpenPullRequest]:
        if query not in self._pulls:
            token = self._token(query, "pullRequest")
            client = self._client(query.tls, "pullRequest")
            listing = _PULL_LISTINGS.get(query.provider, list_pull_requests)
            self._pulls[query] = listing(query, token=token, client=client)
        return self._pulls[query]

    def _forge(self, query: ScmQuery) -> ScmGitHub | ScmGitLab | ScmGitea:
        if query not in self._forges:
            token = self._token(query, "scmProvider")
            client = self._client(query.tls, "scmProvider")
            forge = _SCM_FORGES.get(query.provider, ScmGitHub)
            self._forges[query] = forge(query, token=token, client=client)
        return self._forges[query]

    def scm_repositories(self, query: ScmQuery) -> Sequence[ScmRepository]:
        if query not in self._repos:
            self._repos[query] = self._forge(query).repositories()
        return self._repos[query]

    def scm_branches(self, query: ScmQuery, repo: ScmRepository) -> Sequence[ScmRepository]:
        key = (query, repo)
        if key not in self._branches:
            self._branches[key] = self._forge(query).branches(repo)
        return self._branches[key]

    def scm_has_path(self, query: ScmQuery, repo: ScmRepository, path: str) -> bool:
        key = (query, repo, path)
        if key not in self._paths:
            self._paths[key] = self._forge(query).has_path(repo, path)
        return self._paths[key]

    def plugin_parameters(self, query: PluginQuery) -> Sequence[Mapping[str, Any]]:
        if query not in self._plugins:
            self._plugins[query] = plugin_parameters(
                query, cluster=self._cluster, namespace=self._namespace, client=self._http()
            )
        return self._plugins[query]

    def config_map(self, name: str) -> Mapping[str, str]:
        try:
            found = self._cluster.get("v1", "ConfigMap", name, self._namespace)
        except ClusterError as err:
            raise InputError(f"ConfigMap {self._namespace}/{name} cannot be read: {err}") from None
        return {str(k): str(v) for k, v in (found.get("data") or {}).items()}

    def resources(self, api_version: str, kind: str) -> Sequence[Mapping[str, Any]]:
        try:
            named = self._kind_of_resource(api_version, kind) if kind[:1].islower() else kind
            return self._cluster.list(api_version, named, namespace=self._namespace)
        except ClusterError as err:
            raise InputError(
                f"cannot list {kind} ({api_version}) in {self._namespace}: {err}"
            ) from None

    def _kind_of_resource(self, api_version: str, resource: str) -> str:
        """The kind of a resource name: Argo CD reads a duck-type ConfigMap's `kind` as the
        resource (its example writes `placementdecisions`), found here among the CRDs of
        the group by plural or singular name; a name no CRD has is taken as the kind."""
        group = api_version.partition("/")[0]
        for crd in self._cluster.list(_CRD_API, "CustomResourceDefinition"):
            spec = crd.get("spec") or {}
            names = spec.get("names") or {}
            known = (names.get("plural"), names.get("singular"))
            if spec.get("group") == group and resource in known:
                return str(names.get("kind") or resource)
        return resource
