"""Names every Application module agrees on, in a module that imports nothing, so that a CLI
command can name Applications without loading the controller behind them."""

from __future__ import annotations

__all__ = ["APP_API_VERSION", "DEFAULT_APPS_NAMESPACE"]

APP_API_VERSION = "argoproj.io/v1alpha1"
# Where Applications live unless told otherwise (Argo CD's control-plane namespace).
DEFAULT_APPS_NAMESPACE = "argocd"
