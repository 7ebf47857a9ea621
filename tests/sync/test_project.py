"""AppProject refusals: sources, destinations, resource kinds."""

from __future__ import annotations

from headway.model.application import Destination
from headway.model.appproject import AppProjectSpec, GroupKind, SourceRepo
from headway.sync.project import (
    destination_refusal,
    glob_match,
    normalize_repo_url,
    resource_refusal,
    source_refusal,
)


def spec(**kw: object) -> AppProjectSpec:
    base: dict[str, object] = dict(
        description=None,
        source_repos=(),
        source_namespaces=(),
        destinations=(),
        destination_service_accounts=(),
        cluster_resource_whitelist=(),
        cluster_resource_whitelist_set=False,
        cluster_resource_blacklist=(),
        namespace_resource_whitelist=(),
        namespace_resource_whitelist_set=False,
        namespace_resource_blacklist=(),
        roles=(),
        sync_windows=(),
        orphaned_resources=None,
        signature_keys=(),
        permit_only_project_scoped_clusters=False,
    )
    base.update(kw)
    return AppProjectSpec(**base)  # type: ignore[arg-type]


def repos(*patterns: str) -> tuple[SourceRepo, ...]:
    return tuple(SourceRepo(p.removeprefix("!"), p.startswith("!")) for p in patterns)


def test_repo_urls_normalize() -> None:
    assert normalize_repo_url("https://GitHub.com/Org/Repo.git/") == "https://github.com/org/repo"
    assert normalize_repo_url("git@github.com:org/repo.git") == "ssh://git@github.com/org/repo"


def test_glob_segments() -> None:
    assert glob_match("https://github.com/org/*", "https://github.com/org/repo", separator="/")
    assert not glob_match("https://github.com/org/*", "https://github.com/org/a/b", separator="/")
    assert glob_match("https://github.com/org/**", "https://github.com/org/a/b", separator="/")
    assert glob_match("https://github.com/{org,team}/*", "https://github.com/team/x", separator="/")


def test_sources() -> None:
    project = spec(
        source_repos=repos("https://github.com/acme/*", "!https://github.com/acme/secrets")
    )
    assert source_refusal("prod", project, "https://github.com/acme/shop.git") is None
    denied = source_refusal("prod", project, "https://github.com/acme/secrets")
    assert str(denied) == (
        "project 'prod': source repository https://github.com/acme/secrets is denied by "
        "!https://github.com/acme/secrets"
    )
    other = source_refusal("prod", project, "https://gitlab.com/x/y")
    assert other is not None and "not permitted (sourceRepos)" in other.reason
    # Argo CD's documented rule (its code differs): a negation alone never permits.
    only_denies = spec(source_repos=repos("!https://evil.example/*"))
    assert source_refusal("p", only_denies, "https://github.com/a/b") is not None
    assert source_refusal("p", spec(source_repos=repos("*")), "https://anything/x") is None


def test_destinations_with_globs_and_negation() -> None:
    project = spec(
        destinations=(
            Destination("https://prod.example.com", None, "shop-*"),
            Destination("*", None, "!kube-system"),
        )
    )
    assert (
        destination_refusal("p", project, server="https://prod.example.com", namespace="shop-eu")
        is None
    )
    refused = destination_refusal(
        "p", project, server="https://dev.example.com", namespace="kube-system"
    )
    assert refused is not None and refused.reason == "destination namespace kube-system is denied"
    by_name = spec(destinations=(Destination(None, "in-cluster", "*"),))
    assert destination_refusal("p", by_name, name="in-cluster", namespace="x") is None
    missing = destination_refusal("p", by_name, server="https://other", namespace="x")
    assert missing is not None and "not permitted (destinations)" in missing.reason


def test_cluster_scoped_kinds_need_the_whitelist() -> None:
    locked = spec()
    refused = resource_refusal(
        "apps",
        locked,
        group="rbac.authorization.k8s.io",
        kind="ClusterRoleBinding",
        name="admin",
        namespaced=False,
    )
    assert str(refused) == (
        "project 'apps': rbac.authorization.k8s.io/ClusterRoleBinding admin: cluster-scoped kind "
        "not in clusterResourceWhitelist"
    )
    allowed = spec(cluster_resource_whitelist=(GroupKind("", "Namespace"),))
    assert (
        resource_refusal("p", allowed, group="", kind="Namespace", name="shop", namespaced=False)
        is None
    )
    named = spec(cluster_resource_whitelist=(GroupKind("*", "*", "team-*"),))
    assert (
        resource_refusal("p", named, group="", kind="Namespace", name="team-a", namespaced=False)
        is None
    )
    assert (
        resource_refusal("p", named, group="", kind="Namespace", name="kube-x", namespaced=False)
        is not None
    )


def test_an_explicit_empty_namespace_whitelist_allows_no_namespaced_kind() -> None:
    # Argo CD: nil allows everything, [] allows nothing.
    nothing = spec(namespace_resource_whitelist=(), namespace_resource_whitelist_set=True)
    refused = resource_refusal(
        "p", nothing, group="apps", kind="Deployment", name="a", namespaced=True
    )
    assert refused is not None
    assert refused.reason == "apps/Deployment a: kind not in namespaceResourceWhitelist"


def test_namespaced_white_and_black_lists() -> None:
    assert (
        resource_refusal("p", spec(), group="apps", kind="Deployment", name="a", namespaced=True)
        is None
    )
    only_apps = spec(
        namespace_resource_whitelist=(GroupKind("apps", "*"),),
        namespace_resource_whitelist_set=True,
    )
    assert (
        resource_refusal("p", only_apps, group="apps", kind="Deployment", name="a", namespaced=True)
        is None
    )
    refused = resource_refusal("p", only_apps, group="", kind="Secret", name="s", namespaced=True)
    assert (
        refused is not None
        and refused.reason == "core/Secret s: kind not in namespaceResourceWhitelist"
    )
    no_bindings = spec(
        namespace_resource_blacklist=(GroupKind("rbac.authorization.k8s.io", "RoleBinding"),)
    )
    black = resource_refusal(
        "p",
        no_bindings,
        group="rbac.authorization.k8s.io",
        kind="RoleBinding",
        name="r",
        namespaced=True,
    )
    assert black is not None and "namespaceResourceBlacklist" in black.reason
