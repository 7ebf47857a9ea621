"""Git sources (pygit2) and renderers (directory, Kustomize, Helm)."""
