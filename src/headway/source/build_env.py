"""Argo CD's build environment of a render: the `ARGOCD_APP_*` variables and `$VAR` expansion.

Argo CD's repo server gives Jsonnet values (`directory.jsonnet` extVars and TLAs), plugin `env`
entries and config-management plugins the same variables (`newEnv`): the app's name,
namespace and project, the resolved revision (and its 7- and 8-character prefixes), the
source's repository URL, path and target revision. Expansion follows Go's `os.Expand` as Argo
CD calls it: `$NAME` and `${NAME}` take the variable's value, an unknown name expands to
nothing (never to the process's environment), and `$$` is a literal `$`. Purely computational.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from headway.source.render import RenderRequest

__all__ = ["build_environment", "envsubst"]

_SPECIAL = frozenset("*#$@!?-0123456789")


def build_environment(request: RenderRequest) -> dict[str, str]:
    """The `ARGOCD_APP_*` variables of `request`, as Argo CD sets them for a render."""
    source = request.source
    revision = request.revision
    return {
        "ARGOCD_APP_NAME": request.app_name,
        "ARGOCD_APP_NAMESPACE": request.namespace,
        "ARGOCD_APP_PROJECT_NAME": request.project,
        "ARGOCD_APP_REVISION": revision,
        "ARGOCD_APP_REVISION_SHORT": revision[:7],
        "ARGOCD_APP_REVISION_SHORT_8": revision[:8],
        "ARGOCD_APP_SOURCE_REPO_URL": str(source.get("repoURL") or ""),
        "ARGOCD_APP_SOURCE_PATH": str(source.get("path") or ""),
        "ARGOCD_APP_SOURCE_TARGET_REVISION": str(source.get("targetRevision") or ""),
    }


def envsubst(text: str, env: Mapping[str, str]) -> str:
    """`text` with `$NAME`, `${NAME}` and `$$` expanded from `env` only (Go's `os.Expand`)."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "$" or index + 1 == len(text):
            out.append(char)
            index += 1
            continue
        name, width = _shell_name(text[index + 1 :])
        if name == "$":
            out.append("$")
        elif name:
            out.append(env.get(name, ""))
        elif width == 0:
            out.append("$")  # `$` followed by no name stays as written
        index += 1 + width
    return "".join(out)


def _shell_name(rest: str) -> tuple[str, int]:
    """The variable name after a `$` and how many characters it takes (Go's getShellName)."""
    if rest.startswith("{"):
        if len(rest) > 2 and rest[1] in _SPECIAL and rest[2] == "}":
            return rest[1], 3
        end = rest.find("}")
        if end == -1:
            return "", 1  # bad syntax: the `{` is eaten
        if end == 1:
            return "", 2  # `${}`: eaten
        return rest[1:end], end + 1
    if rest[0] in _SPECIAL:
        return rest[0], 1
    width = 0
    while width < len(rest) and (
        rest[width].isascii() and (rest[width].isalnum() or rest[width] == "_")
    ):
        width += 1
    return rest[:width], width
