"""List pagination in Kubernetes' shape: `limit`, an opaque `continue` token, and a page.

A token names the revision the first page was read at and the last (namespace, name) handed
out; the next page starts after that key. Purely computational, no side effects.

Kubernetes serves every page of one list from the first page's snapshot (etcd keeps old
revisions); so does the local store, rebuilding that snapshot from its event log
(`snapshots`). A token whose revision the event history no longer reaches is `Expired`, as
Kubernetes answers `410` to a compacted one.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import Expired, Invalid
from headway.cluster.protocol import ListPage
from headway.model.obj import Obj

__all__ = [
    "Continuation",
    "ListPage",
    "check_continuation",
    "decode_continue",
    "encode_continue",
    "page_of",
]

_TOKEN_VERSION = "meta.k8s.io/v1"


@dataclass(frozen=True)
class Continuation:
    """Where the next page of a list starts."""

    revision: int  # the revision the first page was consistent with
    namespace: str
    name: str


def encode_continue(continuation: Continuation) -> str:
    body = {
        "v": _TOKEN_VERSION,
        "rv": continuation.revision,
        "start": f"{continuation.namespace}/{continuation.name}",
    }
    raw = json.dumps(body, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str) -> Continuation:
    """The continuation a token names, or `Invalid` saying the token is not one of ours."""
    try:
        padded = token + "=" * (-len(token) % 4)
        body: Any = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError):
        raise Invalid(
            f"continue token {token!r} is not valid: it was not issued by this store"
        ) from None
    if not isinstance(body, dict) or body.get("v") != _TOKEN_VERSION:
        raise Invalid(f"continue token {token!r} is not valid: unknown version")
    start, revision = body.get("start"), body.get("rv")
    if not isinstance(start, str) or "/" not in start or not isinstance(revision, int):
        raise Invalid(f"continue token {token!r} is not valid: missing its start or rv")
    namespace, _, name = start.partition("/")
    return Continuation(revision=revision, namespace=namespace, name=name)


def check_continuation(start: Continuation, compacted: int) -> None:
    """`Expired` when the history no longer reaches the revision a token names."""
    if start.revision < compacted:
        raise Expired(
            f"the continue token is too old (revision {start.revision}; history starts "
            f"after {compacted}): list again without it"
        )


def page_of(
    matching: list[Obj], api_version: str, *, revision: int, limit: int | None, total: int | None
) -> ListPage:
    """The page of `matching`, the first objects after a page's start (`total` of them in
    all when only the first were read)."""
    if not limit or len(matching) <= limit:
        items = [dict(o, apiVersion=api_version) for o in matching]
        return ListPage(items=items, resource_version=str(revision), continue_token="",
                        remaining=None)
    items = [dict(o, apiVersion=api_version) for o in matching[:limit]]
    last = items[-1]["metadata"]
    token = encode_continue(Continuation(
        revision=revision, namespace=last.get("namespace", ""), name=last["name"]))
    return ListPage(items=items, resource_version=str(revision), continue_token=token,
                    remaining=(len(matching) if total is None else total) - limit)
