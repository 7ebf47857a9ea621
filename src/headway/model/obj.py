"""`Obj`: a Kubernetes object as plain JSON data, the one spelling every layer shares.

Objects travel between Git, the renderers, the cores and a cluster as the dicts JSON and YAML
decode to (`apiVersion`, `kind`, `metadata`, `spec`, `status`); the typed views in this
package are read from them, never instead of them. A function that only reads an object takes
`Mapping[str, Any]` when its callers hold other mappings; everything else says `Obj`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Obj"]

Obj = dict[str, Any]
"""A Kubernetes object (or part of one) as a JSON-like dict."""
