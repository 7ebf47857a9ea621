"""Names every Application module agrees on, in a module that imports nothing, so that a CLI
command can name Applications without loading the controller behind them."""

from __future__ import annotations

__all__ = ["APP_API_VERSION", "DEFAULT_APPS_NAMESPACE", "REFRESH_ANNOTATION"]

APP_API_VERSION = "argoproj.io/v1alpha1"
# Where Applications live unless told otherwise (Argo CD's control-plane namespace).
DEFAULT_APPS_NAMESPACE = "argocd"
# Argo CD's request for a refresh ("normal" or "hard"), taken off by the controller.
REFRESH_ANNOTATION = "argocd.argoproj.io/refresh"
