"""Where the pullRequest and scmProvider generators may send a forge token. Pure.

An ApplicationSet comes from Git, so its author chooses the `api:` URL a generator calls and
the `tokenRef` Secret whose value goes with the call. The operator's `ForgePolicy` (the
`headway serve` flags `--enable-scm-providers`, `--allowed-scm-providers`,
`--token-ref-strict-mode`) decides which of those the controller accepts, before any Secret
value is read or any request is made:

* the public API of each supported forge (an empty `api`: GitHub's `https://api.github.com`,
  GitLab's `https://gitlab.com/api/v4`) is always allowed; any other API root (every Gitea
  one: Gitea has no public API) only when the operator lists it (Argo CD allows every URL
  unless a list is given);
* a `tokenRef` Secret must carry `argocd.argoproj.io/secret-type: scm-creds` (Argo CD checks
  the label only in its opt-in strict mode).

Two URLs match when they name the same REST root: the root the forge's client calls
(`github_api_root`: GitHub Enterprise gets `/api/v3`; GitLab `/api/v4`; Gitea `/api/v1`), compared
with the scheme and host in lower case, the default port left out and no trailing `/`. A URL
carrying a user, a query or a fragment never matches: only the scheme, host, port and path say
where a request goes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "DISABLED",
    "PROVIDERS",
    "PUBLIC_GITHUB_API",
    "PUBLIC_GITLAB_API",
    "SCM_CREDS_LABEL",
    "SECRET_TYPE_LABEL",
    "ForgePolicy",
    "destination",
    "gitea_api_root",
    "github_api_root",
    "gitlab_api_root",
    "same_destination",
    "same_origin",
]

PUBLIC_GITHUB_API = "https://api.github.com"
PUBLIC_GITLAB_API = "https://gitlab.com/api/v4"
GITLAB_API_PATH = "/api/v4"
GITEA_API_PATH = "/api/v1"
SECRET_TYPE_LABEL = "argocd.argoproj.io/secret-type"
SCM_CREDS_LABEL = "scm-creds"
DISABLED = (
    "SCM providers are disabled on this controller (`headway serve --disable-scm-providers`)"
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def github_api_root(api: str) -> str:
    """The REST root of an `api` URL as Argo CD's GitHub client reads it: empty is github.com;
    a GitHub Enterprise host gets `/api/v3` unless the URL already ends with it or the host is
    an `api.` one (go-github's WithEnterpriseURLs)."""
    if not api:
        return PUBLIC_GITHUB_API
    root = api.rstrip("/")
    try:
        host = urlsplit(root).hostname or ""
    except ValueError:  # not a URL: `destination` says so when the policy judges it
        host = ""
    if root.endswith("/api/v3") or host.startswith("api.") or ".api." in host:
        return root
    return f"{root}/api/v3"


def gitlab_api_root(api: str) -> str:
    """The REST root of an `api` URL as Argo CD's GitLab client reads it: empty is gitlab.com;
    any other URL gets `/api/v4` unless its path already ends with it (the GitLab client's
    WithBaseURL)."""
    if not api:
        return PUBLIC_GITLAB_API
    root = api.rstrip("/")
    return root if root.endswith(GITLAB_API_PATH) else f"{root}{GITLAB_API_PATH}"


def gitea_api_root(api: str) -> str:
    """The REST root of a Gitea `api` URL (required: Gitea has no public API): `/api/v1`
    added unless its path already ends with it, as Gitea's Go client does."""
    root = api.rstrip("/")
    if not root or root.endswith(GITEA_API_PATH):
        return root
    return f"{root}{GITEA_API_PATH}"


PROVIDERS = {"github": github_api_root, "gitlab": gitlab_api_root, "gitea": gitea_api_root}
"""The forges the generators call, each with how an `api` URL names its REST root."""


def destination(url: str) -> str:
    """`url` as the one place its requests go (`scheme://host[:port]/path`); ValueError saying
    why when it is not a plain http(s) URL that names only that."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as err:
        raise ValueError(f"not a URL ({err})") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError("not an http(s) URL with a host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("a URL with a user part is never allowed")
    if parts.query or parts.fragment:
        raise ValueError("a URL with a query or fragment is never allowed")
    netloc = parts.hostname.lower()
    netloc = f"[{netloc}]" if ":" in netloc else netloc
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc = f"{netloc}:{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def same_destination(first: str, second: str) -> bool:
    """Whether two REST roots send requests to the same place (False when either is not a
    plain http(s) URL)."""
    try:
        return destination(first) == destination(second)
    except ValueError:
        return False


def same_origin(first: str, second: str) -> bool:
    """Whether two URLs reach the same scheme, host and port, whatever their paths (False
    when either is not a plain http(s) URL or names a user): where a forge's next-page link
    may send the token."""
    try:
        return _origin(first) == _origin(second)
    except ValueError:
        return False


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return destination(urlunsplit((parts.scheme, parts.netloc, "", "", "")))


@dataclass(frozen=True)
class ForgePolicy:
    """The operator's rules for forge calls; the default is the strictest useful one.

    `enabled` False refuses both generators outright (Argo CD's `--enable-scm-providers`).
    `allowed_api_urls` lists the API URLs allowed besides the forges' public APIs, as an
    ApplicationSet would write them (`https://ghe.example.com/` and
    `https://ghe.example.com/api/v3` are the same GitHub root; `https://gitlab.example.com`
    and `https://gitlab.example.com/api/v4` the same GitLab root; a listed URL allows its
    root for each forge, as the operator named the host). `token_ref_strict` demands the
    `scm-creds` label on every `tokenRef` Secret."""

    enabled: bool = True
    allowed_api_urls: tuple[str, ...] = ()
    token_ref_strict: bool = True

    def __post_init__(self) -> None:
        for url in self.allowed_api_urls:
            try:
                destination(github_api_root(url))
            except ValueError as err:
                raise ValueError(f"allowed SCM provider {url!r}: {err}") from None

    def allowed_roots(self, provider: str = "github") -> tuple[str, ...]:
        """Every allowed REST root of a forge (`github`, `gitlab`, `gitea`), its public API
        first when it has one."""
        root_of = PROVIDERS[provider]
        listed = [root_of(u) for u in self.allowed_api_urls if u]
        public = root_of("")
        return (public, *listed) if public else tuple(listed)

    def api_refusal(self, api: str, provider: str = "github") -> str | None:
        """Why a generator's `api` for the forge `provider` may not be called, or None when
        it may (`enabled` is asked apart: `DISABLED` names the generator, not a field)."""
        root = PROVIDERS[provider](api)
        try:
            destination(root)
        except ValueError as err:
            return f"API URL {api!r} is refused: {err}"
        if any(same_destination(root, allowed) for allowed in self.allowed_roots(provider)):
            return None
        return (
            f"API URL {api!r} is not allowed: the controller sends forge tokens only to "
            f"{_listing(self.allowed_api_urls, provider)}; an operator allows more with "
            "`headway serve --allowed-scm-providers`"
        )

    def secret_refusal(self, labels: Mapping[str, str]) -> str | None:
        """Why a `tokenRef` Secret with these labels may not be read, or None."""
        if not self.token_ref_strict or labels.get(SECRET_TYPE_LABEL) == SCM_CREDS_LABEL:
            return None
        return (
            f"is not labelled {SECRET_TYPE_LABEL}: {SCM_CREDS_LABEL}; only Secrets labelled "
            "for forge tokens are sent to a forge"
        )


_PUBLIC_NAMES = {
    "github": f"the public GitHub API ({PUBLIC_GITHUB_API})",
    "gitlab": f"the public GitLab API ({PUBLIC_GITLAB_API})",
}


def _listing(allowed: Sequence[str], provider: str) -> str:
    named = ", ".join(u for u in allowed if u)
    public = _PUBLIC_NAMES.get(provider)
    if public is None:
        return named or "the hosts an operator lists (Gitea has no public API allowed by default)"
    return f"{public} and {named}" if named else public
