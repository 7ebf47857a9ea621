"""What a sync operation's step is worth recording: derived from its state before and after
the step. Purely computational.

`status.operationState` is rewritten at every step: its `message` says which wave is waiting
on which resource only until the next step, and `syncResult.resources` keeps what was applied
but not in which wave. Comparing the state before and after a step recovers both, as journal
records (`headway.decisions`):

* `started`: the operation, who started it, the revisions it syncs to;
* `applied`: a (phase, wave) step applied, with every result it added or changed;
* `waiting`: the step's gate says wait, naming each resource and its health (recorded when
  the reason changes, not at every poll);
* `passed`: the step's gate passed;
* `finished`: the end phase and message.

The operation is named by its start time (`startedAt`), which Argo CD's state already keeps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["operation_records"]

Record = tuple[str, dict[str, Any]]  # type, data
_ENDED = {"Succeeded", "Failed", "Error"}


def _results(state: Mapping[str, Any]) -> dict[tuple[str, ...], Mapping[str, Any]]:
    listed = (state.get("syncResult") or {}).get("resources") or []
    out: dict[tuple[str, ...], Mapping[str, Any]] = {}
    for raw in listed:
        if isinstance(raw, Mapping):
            key = tuple(str(raw.get(k, "")) for k in ("group", "kind", "namespace", "name"))
            out[(*key, str(raw.get("syncPhase", "")))] = raw
    return out


def _resource(raw: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("group", "kind", "namespace", "name", "status", "message", "syncPhase", "hookPhase")
    return {k: raw[k] for k in keys if raw.get(k)}


def _cursor(state: Mapping[str, Any]) -> Mapping[str, Any]:
    wave = state.get("wave")
    return wave if isinstance(wave, Mapping) else {}


def operation_records(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> list[Record]:
    """The records one step of the operation in `after` adds (`before`: the state the step
    started from; None or another operation's state when this one just started)."""
    if not after.get("startedAt"):
        return []
    same = before is not None and before.get("startedAt") == after.get("startedAt")
    previous: Mapping[str, Any] = before if same and before is not None else {}
    records: list[Record] = []
    if not same:
        records.append(("started", _started(after)))
    records.extend(_applied(previous, after))
    records.extend(_gate(previous, after))
    if after.get("phase") in _ENDED and previous.get("phase") not in _ENDED:
        records.append(
            ("finished", {"phase": after.get("phase"), "message": after.get("message", "")})
        )
    return records


def _started(state: Mapping[str, Any]) -> dict[str, Any]:
    operation = state.get("operation") or {}
    sync = operation.get("sync") or {}
    return {
        "initiatedBy": operation.get("initiatedBy") or {},
        "revisions": sync.get("revisions") or [sync.get("revision", "")],
        "prune": bool(sync.get("prune")),
        "retryCount": state.get("retryCount", 0),
    }


def _applied(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Record]:
    old, new = _results(before), _results(after)
    changed = [_resource(raw) for key, raw in new.items() if old.get(key) != raw]
    if not changed:
        return []
    cursor = _cursor(after)
    data = {"phase": cursor.get("phase", ""), "wave": cursor.get("wave"), "resources": changed}
    return [("applied", data)]


def _gate(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Record]:
    message = str(after.get("message") or "")
    if message == str(before.get("message") or "") or after.get("phase") != "Running":
        return []
    cursor = _cursor(after)
    where = {"phase": cursor.get("phase", ""), "wave": cursor.get("wave"), "message": message}
    if " waiting: " in message or message.startswith("Waiting for pruning confirmation"):
        return [("waiting", where)]
    if cursor.get("passed") and not _cursor(before).get("passed"):
        return [("passed", where)]
    return []
