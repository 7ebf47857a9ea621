"""Pod-template hashing: the `pod-template-hash` a ReplicaSet of a Deployment or Rollout
carries in its name and labels. Pure; shared by the local Deployment controller and the
Rollouts controller, which must agree on it whatever the backend.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["SAFE_ALPHABET", "pod_template_hash", "safe_encode"]

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def safe_encode(text: str) -> str:
    """Map each character to the consonant-and-digit alphabet Kubernetes uses for names."""
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in text)


def _fnv1a_32(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value ^= byte
        value = (value * 0x01000193) & 0xFFFFFFFF
    return value


def pod_template_hash(template: Mapping[str, Any], collision_count: int = 0) -> str:
    """A short stable name for a pod template: FNV-1a/32 of its canonical JSON (keys sorted,
    the `pod-template-hash` label left out), plus the collision count, safe-encoded.

    Equal templates give equal hashes; any change (an image tag, an env value) gives a new
    one. The digits differ from Kubernetes', which hashes Go's printed form of the struct."""
    clean = json.loads(json.dumps(template))
    labels = (clean.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop("pod-template-hash", None)
    data = json.dumps(clean, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += str(collision_count).encode()
    return safe_encode(str(_fnv1a_32(data)))
