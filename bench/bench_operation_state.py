"""The typed sync operation state: what reading and writing it back costs per step.

    .venv/bin/python bench/bench_operation_state.py

Every unit of a sync operation reads `status.operationState` into `OperationState` and writes
it back as a dict. This measures that round trip for operations with 10, 100 and 1000
resource entries against the floor every step pays anyway: `json.dumps` of the same state,
which the store does to persist it. The ratio is the claim.
"""

from __future__ import annotations

import json
from typing import Any

from _timing import per_call_us
from headway.sync.operation_state import OperationState


def _state(resources: int) -> dict[str, Any]:
    entries = [
        {
            "group": "apps",
            "version": "v1",
            "kind": "Deployment",
            "namespace": "shop",
            "name": f"web-{i}",
            "status": "Synced",
            "message": f"deployment.apps/web-{i} configured",
            "syncPhase": "Sync",
        }
        for i in range(resources)
    ]
    return {
        "operation": {
            "sync": {"prune": True, "revision": "abc"},
            "initiatedBy": {"automated": True},
        },
        "phase": "Running",
        "message": "wave 0: applied tasks",
        "startedAt": "2026-01-02T03:04:05Z",
        "operationId": "f00d",
        "retryCount": 0,
        "syncResult": {"revision": "abc", "revisions": ["abc"], "resources": entries},
        "dryRunDone": True,
        "wave": {"phase": "Sync", "wave": 0, "applied": True},
    }


def main() -> None:
    print(f"{'resources':>9}  {'round trip µs':>13}  {'json.dumps µs':>13}  ratio")
    for count in (10, 100, 1000):
        raw = _state(count)
        typed = per_call_us(lambda raw=raw: OperationState.from_dict(raw).to_dict(), 1.0)
        floor = per_call_us(lambda raw=raw: json.dumps(raw), 1.0)
        print(f"{count:>9}  {typed:>13.1f}  {floor:>13.1f}  {typed / floor:.2f}")


if __name__ == "__main__":
    main()
