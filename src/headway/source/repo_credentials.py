"""Git credentials from Argo CD repository Secrets: Secret dicts in, `GitCredentials` out.

Pure: no cluster access, no logging. Two kinds of Secret, told apart by the label
`argocd.argoproj.io/secret-type` (Argo CD's declarative setup):

* `repository`: credentials for one repository; `url` must name it (compared normalized:
  no trailing `/` or `.git`, scheme and host in lower case, `git@host:path` = `ssh://git@host/path`).
* `repo-creds`: a credential template; its `url` is a prefix, and of every template whose
  prefix the repository URL starts with on the template's own scheme, user and host (with
  port), the longest wins.

A `repository` Secret wins over any template; one that carries no credentials of its own
(only `url`, say) borrows them from the matching template, as Argo CD does. Fields read
(from `data`, base64, or `stringData`, which wins as in Kubernetes): `url`, `username`,
`password`, `sshPrivateKey`, `insecure`, `type`, `project` and `insecure` (skip TLS
verification), the last two on `repository` Secrets only. `type` decides who reads a Secret:
Git sources those of type `git` or none, charts from Helm repositories those of type `helm`
(`for_url(url, repo_type="helm")`: `username`, `password`, `insecure`, and the client
certificate `tlsClientCertData` + `tlsClientCertKey`; `helm_options(url)`: `enableOCI`,
`insecureOCIForceHttp`, and the fields Headway cannot honour for a chart repository,
`proxy`, `noProxy` and `useAzureWorkloadIdentity`, whose fetch then fails naming them);
`oci` Secrets are skipped.

Errors name the Secret and the field, never a value.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from headway.source.errors import SourceError
from headway.source.git import GitCredentials

__all__ = [
    "HELM_FIELDS_REFUSED",
    "REPOSITORY",
    "REPO_CREDS",
    "SECRET_TYPE_LABEL",
    "CredentialIndex",
    "HelmRepoOptions",
    "RepoCredentialsError",
    "build_index",
    "normalize_repo_url",
    "resolve_credentials",
    "secret_type",
]

SECRET_TYPE_LABEL = "argocd.argoproj.io/secret-type"
REPOSITORY = "repository"
REPO_CREDS = "repo-creds"

_TRUE = frozenset({"1", "t", "true"})  # Go's strconv.ParseBool, as Argo CD reads `insecure`
_FALSE = frozenset({"0", "f", "false"})
_TYPES = {"": "git", "git": "git", "helm": "helm"}  # the Secret's `type` -> who reads it
# Fields of a `type: helm` Secret that change how Argo CD reaches the repository and that
# Headway cannot do: ignoring one would fetch another way than the operator configured.
HELM_FIELDS_REFUSED = ("proxy", "noProxy", "useAzureWorkloadIdentity")


class RepoCredentialsError(SourceError):
    """A repository Secret that cannot be read; names the Secret and the field only."""

    def __init__(self, secret: str, field: str, reason: str) -> None:
        super().__init__(f"Secret {secret}: field {field!r}: {reason}")
        self.secret = secret
        self.field = field


def normalize_repo_url(url: str) -> str:
    """The form two URLs of the same repository share: `https://Host/org/app.git/` and
    `https://host/org/app` agree; the path keeps its case."""
    text = url.strip()
    if "://" not in text and "@" in text.split("/", 1)[0] and ":" in text:
        user_host, _, path = text.partition(":")  # scp-like `git@host:org/app`
        text = f"ssh://{user_host}/{path.lstrip('/')}"
    parts = urlsplit(text)
    if not parts.scheme or not parts.netloc:
        return text.rstrip("/").removesuffix(".git").rstrip("/")
    user, at, host = parts.netloc.rpartition("@")
    netloc = f"{user}{at}{host.lower()}"
    path = parts.path.rstrip("/").removesuffix(".git").rstrip("/")
    return f"{parts.scheme.lower()}://{netloc}{path}"


@dataclass(frozen=True)
class HelmRepoOptions:
    """How to reach a chart repository, besides its credentials."""

    enable_oci: bool = False  # `enableOCI`: an OCI registry, whatever the URL looks like
    oci_plain_http: bool = False  # `insecureOCIForceHttp`: the registry over plain HTTP
    refused: str = ""  # why the repository may not be fetched: a field Headway cannot honour
    ca_data: str | None = None  # PEM CAs trusted for the host (argocd-tls-certs-cm)


@dataclass(frozen=True)
class _Entry:
    secret: str  # namespace/name, for messages
    url: str  # normalized
    project: str
    credentials: GitCredentials | None  # None: the Secret carries none of its own
    insecure: bool
    repo_type: str = "git"  # "git" or "helm"
    helm: HelmRepoOptions = HelmRepoOptions()


@dataclass(frozen=True)
class CredentialIndex:
    """Parsed repository Secrets; `problems` lists the unreadable ones (names and fields)."""

    repositories: tuple[_Entry, ...] = ()
    templates: tuple[_Entry, ...] = ()
    problems: tuple[RepoCredentialsError, ...] = ()

    def for_url(
        self, url: str, project: str = "", *, repo_type: str = "git"
    ) -> GitCredentials | None:
        """The credentials for `url`: the `repository` Secret of `project` (else one with no
        project), else the longest matching `repo-creds` prefix, else None; only Secrets of
        `repo_type` ("git", or "helm" for chart repositories) count."""
        normal = normalize_repo_url(url)
        exact = self._repository(normal, project, repo_type)
        template = self._template(normal, repo_type)
        if exact is not None and exact.credentials is not None:
            return exact.credentials
        if exact is not None and template is not None and template.credentials is not None:
            return _with_insecure(template.credentials, exact.insecure)
        if exact is not None:
            return _with_insecure(GitCredentials(), exact.insecure) if exact.insecure else None
        return template.credentials if template is not None else None

    def helm_options(self, url: str, project: str = "") -> HelmRepoOptions:
        """The chart repository's `type: helm` Secret's options: its own, and a flag its
        `repo-creds` template sets also applies (`enableOCI`, `insecureOCIForceHttp`)."""
        normal = normalize_repo_url(url)
        found = [
            e.helm
            for e in (self._repository(normal, project, "helm"), self._template(normal, "helm"))
            if e is not None
        ]
        if not found:
            return HelmRepoOptions()
        return HelmRepoOptions(
            enable_oci=any(o.enable_oci for o in found),
            oci_plain_http=any(o.oci_plain_http for o in found),
            refused=next((o.refused for o in found if o.refused), ""),
        )

    def _repository(self, normal: str, project: str, repo_type: str) -> _Entry | None:
        same = [e for e in self.repositories if e.url == normal and e.repo_type == repo_type]
        for wanted in (project, ""):
            found = next((e for e in same if e.project == wanted), None)
            if found is not None:
                return found
        return None

    def _template(self, normal: str, repo_type: str) -> _Entry | None:
        best: _Entry | None = None
        for entry in self.templates:
            if entry.repo_type != repo_type:
                continue
            if not _template_covers(entry.url, normal):
                continue
            if best is None or len(entry.url) > len(best.url):
                best = entry
        return best


def _template_covers(prefix: str, normal: str) -> bool:
    """Whether a `repo-creds` template (normalized `prefix`) lends its credentials to the
    normalized repository URL: a text prefix as in Argo CD, but only on the template's own
    scheme, user and host (with port). Argo CD's plain prefix lets `https://github.com` cover
    `https://github.com.evil.example/...` and `https://github.com@evil.example/...`, so an
    Application's author could choose where the template's token is sent."""
    if not normal.startswith(prefix):
        return False
    mine = urlsplit(prefix)
    if not mine.scheme or not mine.netloc:
        return True  # no host to stay on (a template without a scheme)
    theirs = urlsplit(normal)
    return (theirs.scheme, theirs.netloc) == (mine.scheme, mine.netloc)


def _with_insecure(credentials: GitCredentials, insecure: bool) -> GitCredentials:
    return replace(credentials, insecure_skip_tls_verify=insecure)


def secret_type(secret: Mapping[str, Any]) -> str:
    labels = (secret.get("metadata") or {}).get("labels") or {}
    return str(labels.get(SECRET_TYPE_LABEL) or "") if isinstance(labels, Mapping) else ""


def _secret_name(secret: Mapping[str, Any]) -> str:
    meta = secret.get("metadata") or {}
    return f"{meta.get('namespace') or '-'}/{meta.get('name') or '?'}"


def _fields(secret: Mapping[str, Any], name: str) -> dict[str, str]:
    """`data` decoded from base64, overlaid by `stringData`."""
    out: dict[str, str] = {}
    for section, encoded in (("data", True), ("stringData", False)):
        values = secret.get(section) or {}
        if not isinstance(values, Mapping):
            raise RepoCredentialsError(name, section, "must be a mapping of strings")
        for key, value in values.items():
            out[str(key)] = _field_text(name, f"{section}.{key}", value, encoded=encoded)
    return out


def _field_text(name: str, field: str, value: object, *, encoded: bool) -> str:
    if not isinstance(value, str):
        raise RepoCredentialsError(name, field, f"must be a string, not {type(value).__name__}")
    if not encoded:
        return value
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise RepoCredentialsError(name, field, "is not valid base64 of UTF-8 text") from None


def _flag(name: str, fields: Mapping[str, str], key: str) -> bool:
    text = fields.get(key, "").strip().lower()
    if text in _TRUE or text in _FALSE or not text:
        return text in _TRUE
    raise RepoCredentialsError(name, key, 'must be "true" or "false"')


def _insecure(name: str, fields: Mapping[str, str]) -> bool:
    return _flag(name, fields, "insecure")


def _client_certificate(
    name: str, fields: Mapping[str, str], repo_type: str
) -> tuple[str | None, str | None]:
    """`tlsClientCertData` and `tlsClientCertKey` (PEM), both or neither; chart repositories
    only (Git remotes do not read them)."""
    if repo_type != "helm":
        return None, None
    cert = fields.get("tlsClientCertData") or None
    key = fields.get("tlsClientCertKey") or None
    if (cert is None) != (key is None):
        missing = "tlsClientCertKey" if key is None else "tlsClientCertData"
        raise RepoCredentialsError(name, missing, "is required with the other half of the pair")
    if cert is not None and "-----BEGIN CERTIFICATE-----" not in cert:
        raise RepoCredentialsError(name, "tlsClientCertData", "is not a PEM certificate")
    if key is not None and "PRIVATE KEY-----" not in key:
        raise RepoCredentialsError(name, "tlsClientCertKey", "is not a PEM private key")
    return cert, key


def _credentials(
    name: str, fields: Mapping[str, str], insecure: bool, repo_type: str
) -> GitCredentials | None:
    username = fields.get("username") or None
    password = fields.get("password") or None
    key = fields.get("sshPrivateKey") or None
    if key is not None and "PRIVATE KEY-----" not in key:
        raise RepoCredentialsError(name, "sshPrivateKey", "is not a PEM or OpenSSH private key")
    cert, cert_key = _client_certificate(name, fields, repo_type)
    if username is None and password is None and key is None and cert is None:
        return None
    return GitCredentials(
        username=username,
        password=password,
        ssh_private_key_data=key if key is None or key.endswith("\n") else key + "\n",
        insecure_skip_tls_verify=insecure,
        tls_client_cert=cert,
        tls_client_key=cert_key,
    )


def _helm_options(name: str, fields: Mapping[str, str]) -> HelmRepoOptions:
    refused = [
        f for f in HELM_FIELDS_REFUSED
        if fields.get(f, "").strip() and fields[f].strip().lower() not in _FALSE
    ]
    reason = ""
    if refused:
        listed = ", ".join(refused)
        reason = f"repository Secret {name}: {listed} is not supported by Headway for charts"
    return HelmRepoOptions(
        enable_oci=_flag(name, fields, "enableOCI"),
        oci_plain_http=_flag(name, fields, "insecureOCIForceHttp"),
        refused=reason,
    )


def _parse(secret: Mapping[str, Any], kind: str) -> _Entry | None:
    """One Secret as an entry; None for a Secret of another repository type (oci).
    A template's `insecure` is ignored: Argo CD's credential templates have no such field."""
    name = _secret_name(secret)
    fields = _fields(secret, name)
    repo_type = _TYPES.get(fields.get("type", "").strip().lower())
    if repo_type is None:
        return None
    url = fields.get("url", "").strip()
    if not url:
        raise RepoCredentialsError(name, "url", "is required")
    insecure = _insecure(name, fields) if kind == REPOSITORY else False
    return _Entry(
        secret=name,
        url=normalize_repo_url(url),
        project=fields.get("project", "").strip(),
        credentials=_credentials(name, fields, insecure, repo_type),
        insecure=insecure,
        repo_type=repo_type,
        helm=_helm_options(name, fields) if repo_type == "helm" else HelmRepoOptions(),
    )


def build_index(secrets: Iterable[Mapping[str, Any]]) -> CredentialIndex:
    """Every `repository` and `repo-creds` Secret; unreadable ones go to `problems`."""
    repositories: list[_Entry] = []
    templates: list[_Entry] = []
    problems: list[RepoCredentialsError] = []
    for secret in secrets:
        kind = secret_type(secret)
        if kind not in (REPOSITORY, REPO_CREDS):
            continue
        try:
            entry = _parse(secret, kind)
        except RepoCredentialsError as err:
            problems.append(err)
            continue
        if entry is not None:
            (repositories if kind == REPOSITORY else templates).append(entry)
    return CredentialIndex(tuple(repositories), tuple(templates), tuple(problems))


def resolve_credentials(
    secrets: Iterable[Mapping[str, Any]], url: str, *, project: str = ""
) -> GitCredentials | None:
    """The credentials for `url`; raises the first `RepoCredentialsError` of a bad Secret."""
    index = build_index(secrets)
    if index.problems:
        raise index.problems[0]
    return index.for_url(url, project)
