"""A Service a Rollout steers keeps the pod hash the Rollout put into its selector.

Argo Rollouts narrows a canary's or blue-green's Services to one ReplicaSet by adding
`rollouts-pod-template-hash: <hash>` to their selector. A Service's selector is one atomic
value, so applying the app's own selector (without the hash) would replace it whole and
point the stable Service at every revision's pods until the Rollout wrote it again. Argo CD's
default (client-side) apply keeps the key because its three-way merge leaves keys it never
applied; Headway keeps it the same way by carrying the live hash into what it applies.
Purely computational.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ROLLOUT_HASH_LABEL", "keep_rollout_selector"]

ROLLOUT_HASH_LABEL = "rollouts-pod-template-hash"


def keep_rollout_selector(
    desired: Mapping[str, Any], live: Mapping[str, Any] | None
) -> dict[str, Any]:
    """`desired` with the live Service's pod hash added to its selector when a Rollout set
    one there and the desired selector does not name it; otherwise `desired` unchanged."""
    if live is None or desired.get("kind") != "Service" or desired.get("apiVersion") != "v1":
        return dict(desired)
    live_selector = (live.get("spec") or {}).get("selector")
    if not isinstance(live_selector, Mapping):
        return dict(desired)
    pod_hash = live_selector.get(ROLLOUT_HASH_LABEL)
    spec = desired.get("spec")
    if not pod_hash or not isinstance(spec, Mapping):
        return dict(desired)
    selector = spec.get("selector")
    if not isinstance(selector, Mapping) or not selector or ROLLOUT_HASH_LABEL in selector:
        return dict(desired)
    return {**desired, "spec": {**spec, "selector": {**selector, ROLLOUT_HASH_LABEL: pod_hash}}}
