"""AppProject enforcement: may this source, destination or resource be used? Purely
computational; each check returns None when permitted or a refusal saying why.

Argo CD's rules: `sourceRepos` are globs over normalized repository URLs (`*` stays within a
path segment, `**` crosses them, a lone `*` allows all); a source is permitted when an allow
pattern matches and no `!pattern` does (Argo CD's documented rule; its code also lets a URL
through when it merely escapes a `!pattern`, which Headway does not). Destinations match
when server or name and the namespace match; a non-matching `!` server/name (with the
namespace matching) or `!` namespace (with the server matching) refuses. Cluster-scoped
kinds are denied unless in `clusterResourceWhitelist` (and not blacklisted); namespaced
kinds are allowed unless a non-empty `namespaceResourceWhitelist` omits them or the
blacklist names them.

Applications themselves are confined too (Argo CD's "applications in any namespace"): an
Application is served only in the control namespace or a namespace the controller is
configured for, and outside the control namespace only when its project lists that
namespace in `sourceNamespaces`. Both lists hold globs, or regular expressions written
`/.../`.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from headway.model.appproject import AppProjectSpec, GroupKind

__all__ = [
    "Refusal",
    "app_namespace_managed",
    "destination_refusal",
    "glob_match",
    "normalize_repo_url",
    "resource_refusal",
    "source_namespace_refusal",
    "source_refusal",
]


@dataclass(frozen=True)
class Refusal:
    project: str
    reason: str

    def __str__(self) -> str:
        return f"project {self.project!r}: {self.reason}"


def normalize_repo_url(url: str) -> str:
    """Lower-case, without a trailing slash or `.git`, scp-style `git@host:path` as a URL."""
    text = url.strip().lower().rstrip("/")
    text = text.removesuffix(".git")
    scp = re.fullmatch(r"([\w.-]+@)?([\w.-]+):(?!//)(.+)", text)
    if scp and "://" not in text:
        text = f"ssh://{scp.group(1) or ''}{scp.group(2)}/{scp.group(3)}"
    return text


def glob_match(pattern: str, value: str, *, separator: str | None = None) -> bool:
    """Glob with `*`, `?`, `[...]`, `{a,b}`; with a separator `*` stays within a segment and
    `**` crosses segments. A lone `*` matches everything."""
    if pattern == "*":
        return True
    return _compiled_glob(pattern, separator).fullmatch(value) is not None


@functools.lru_cache(maxsize=1024)
def _compiled_glob(pattern: str, separator: str | None) -> re.Pattern[str]:
    """The pattern's regular expression, translated once: a project's few patterns are
    matched against every Application's repository and destination."""
    return re.compile(_glob_regex(pattern, separator))


def _glob_regex(pattern: str, separator: str | None) -> str:
    any_char = f"[^{re.escape(separator)}]" if separator else "."
    out, i = "", 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i):
            out, i = out + ".*", i + 2
            continue
        if char == "*":
            out += f"{any_char}*"
        elif char == "?":
            out += any_char
        elif char == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            options = pattern[i + 1 : end].split(",")
            out += "(?:" + "|".join(_glob_regex(o, separator) for o in options) + ")"
            i = end
        elif char == "[" and "]" in pattern[i:]:
            end = pattern.index("]", i)
            out += "[" + pattern[i + 1 : end].replace("!", "^", 1) + "]"
            i = end
        else:
            out += re.escape(char)
        i += 1
    return out


def source_refusal(project: str, spec: AppProjectSpec, repo_url: str) -> Refusal | None:
    wanted = normalize_repo_url(repo_url)
    permitted = False
    for repo in spec.source_repos:
        matched = glob_match(normalize_repo_url(repo.pattern), wanted, separator="/")
        if repo.negated and matched:
            return Refusal(project, f"source repository {repo_url} is denied by !{repo.pattern}")
        permitted = permitted or (matched and not repo.negated)
    if permitted:
        return None
    return Refusal(project, f"source repository {repo_url} is not permitted (sourceRepos)")


def _neg_match(pattern: str | None, value: str) -> tuple[bool, bool]:
    """(matched, is_deny) for one destination field; a `!p` matches what `p` does not."""
    text = pattern or ""
    if text.startswith("!"):
        return (not glob_match(text[1:], value)), True
    return glob_match(text, value), False


def destination_refusal(
    project: str, spec: AppProjectSpec, *, server: str = "", name: str = "", namespace: str = ""
) -> Refusal | None:
    where = f"server {server or '-'}, name {name or '-'}, namespace {namespace or '-'}"
    permitted = False
    for item in spec.destinations:
        name_ok, name_deny = _neg_match(item.name, name)
        server_ok, server_deny = _neg_match(item.server, server)
        name_ok, server_ok = bool(name) and name_ok, bool(server) and server_ok
        ns_ok, ns_deny = _neg_match(item.namespace, namespace)
        if (server_ok or name_ok) and ns_ok:
            permitted = True
        elif ((not name_ok and name_deny) or (not server_ok and server_deny)) and ns_ok:
            return Refusal(project, f"destination ({where}) is denied by a ! destination")
        elif not ns_ok and ns_deny and server_ok:
            return Refusal(project, f"destination namespace {namespace} is denied")
    if permitted:
        return None
    return Refusal(project, f"destination ({where}) is not permitted (destinations)")


def _in_list(group: str, kind: str, name: str, items: Sequence[GroupKind]) -> bool:
    for item in items:
        if not fnmatch.fnmatchcase(kind, item.kind) or not fnmatch.fnmatchcase(group, item.group):
            continue
        if not item.name or fnmatch.fnmatchcase(name, item.name):
            return True
    return False


def resource_refusal(
    project: str, spec: AppProjectSpec, *, group: str, kind: str, name: str, namespaced: bool
) -> Refusal | None:
    label = f"{group or 'core'}/{kind} {name}"
    if namespaced:
        # As in Argo CD: an absent whitelist allows every namespaced kind, an explicit
        # empty one allows none.
        allow = spec.namespace_resource_whitelist
        restricted = spec.namespace_resource_whitelist_set
        if restricted and not _in_list(group, kind, name, allow):
            return Refusal(project, f"{label}: kind not in namespaceResourceWhitelist")
        if _in_list(group, kind, name, spec.namespace_resource_blacklist):
            return Refusal(project, f"{label}: kind is in namespaceResourceBlacklist")
        return None
    if not _in_list(group, kind, name, spec.cluster_resource_whitelist):
        return Refusal(project, f"{label}: cluster-scoped kind not in clusterResourceWhitelist")
    if _in_list(group, kind, name, spec.cluster_resource_blacklist):
        return Refusal(project, f"{label}: cluster-scoped kind is in clusterResourceBlacklist")
    return None


def _namespace_match(pattern: str, namespace: str) -> bool:
    if len(pattern) > 1 and pattern.startswith("/") and pattern.endswith("/"):
        try:
            return re.search(pattern[1:-1], namespace) is not None
        except re.error:
            return False  # a pattern that cannot be read permits nothing
    return glob_match(pattern, namespace)


def app_namespace_managed(
    namespace: str, *, control_namespace: str, patterns: Sequence[str]
) -> bool:
    """Whether the controller serves Applications in `namespace`: its control namespace,
    or one matched by its configured patterns (Argo CD's `application.namespaces`)."""
    if namespace == control_namespace:
        return True
    return any(_namespace_match(p, namespace) for p in patterns)


def source_namespace_refusal(
    project: str, spec: AppProjectSpec, *, app_namespace: str, control_namespace: str
) -> Refusal | None:
    """Why the project refuses an Application living in `app_namespace`; an Application in
    the control namespace is always permitted, any other needs `sourceNamespaces`."""
    if app_namespace == control_namespace:
        return None
    if any(_namespace_match(p, app_namespace) for p in spec.source_namespaces):
        return None
    return Refusal(
        project,
        f"an Application in namespace {app_namespace} may not use this project "
        f"(sourceNamespaces does not list it)",
    )
