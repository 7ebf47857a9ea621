"""Answers to the questions clients ask before acting: "may I?" (`SelfSubjectAccessReview`,
`SelfSubjectRulesReview`: `kubectl auth can-i`, k9s) and "who am I?" (`SelfSubjectReview`:
`kubectl auth whoami`). Purely computational.

The local API authenticates no one and authorizes everything (docs/kubernetes.md), so the
answers say exactly that: allowed, every rule, one local user. The answer does not depend
on the question, so a protobuf body (kubectl's typed clients send one) is not decoded: the
review comes back in JSON, without the question's `spec`.
"""

from __future__ import annotations

from typing import Any

from headway.cluster.local.api.kubeapi.catalog import ApiKind
from headway.cluster.local.api.kubeapi.status import ApiError

__all__ = ["USERNAME", "answer"]

USERNAME = "headway-local"
_REASON = "the local runtime's API allows every request from 127.0.0.1"


def answer(kind: ApiKind, raw: Any) -> dict[str, Any]:
    """The review `raw` asks for, with its status filled in."""
    if not isinstance(raw, dict) or raw.get("kind") != kind.kind:
        raise ApiError(400, "BadRequest", f"the request body must be a {kind.kind}")
    review = {"apiVersion": kind.api_version, "kind": kind.kind,
              "metadata": raw.get("metadata") or {}, "spec": raw.get("spec") or {}}
    if kind.kind == "SelfSubjectAccessReview":
        review["status"] = {"allowed": True, "reason": _REASON}
    elif kind.kind == "SelfSubjectRulesReview":
        review["status"] = {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        }
    else:
        review["status"] = {"userInfo": {
            "username": USERNAME, "groups": ["system:masters", "system:authenticated"]}}
    return review
