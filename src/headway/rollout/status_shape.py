"""A checked view of a Rollout's status: the shapes the decisions rely on.

The status is the controller's memory (the step reached, the pauses, the abort, the runs
it started). It is written through the API like any other field, so it can hold anything.
`status_problem` names the first field whose shape the decisions could not read (a
`canary: false`, a `pauseConditions: 5`), so the controller reports it instead of
failing inside a decision or, worse, reading garbage as a yes or a no. A null is the
same as an absent field; fields not listed here are never read and so never checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["status_problem", "usable_conditions"]

_Shape = type | tuple[type, ...] | dict[str, Any] | list[Any]

_RUN_STATUS: dict[str, _Shape] = {"name": str, "status": str, "message": str}
_WEIGHT: dict[str, _Shape] = {"weight": int, "podTemplateHash": str, "serviceName": str}
_CONDITION: dict[str, _Shape] = {
    "type": str,
    "status": str,
    "reason": str,
    "message": str,
    "lastUpdateTime": str,
    "lastTransitionTime": str,
}

_STATUS: dict[str, _Shape] = {
    "abort": bool,
    "controllerPause": bool,
    "promoteFull": bool,
    "currentStepIndex": int,
    "replicas": int,
    "updatedReplicas": int,
    "readyReplicas": int,
    "availableReplicas": int,
    "collisionCount": int,
    "observedGeneration": (str, int),
    "workloadObservedGeneration": str,
    "stableRS": str,
    "currentPodHash": str,
    "currentStepHash": str,
    "abortedAt": str,
    "restartedAt": str,
    "phase": str,
    "message": str,
    "conditions": [_CONDITION],
    "pauseConditions": [{"reason": str, "startTime": str}],
    "canary": {
        "weights": {
            "canary": _WEIGHT,
            "stable": _WEIGHT,
            "additional": [_WEIGHT],
            "verified": bool,
        },
        "currentStepAnalysisRunStatus": _RUN_STATUS,
        "currentBackgroundAnalysisRunStatus": _RUN_STATUS,
        "currentExperiment": str,
    },
    "blueGreen": {
        "activeSelector": str,
        "previewSelector": str,
        "scaleUpPreviewCheckPoint": bool,
        "prePromotionAnalysisRunStatus": _RUN_STATUS,
        "postPromotionAnalysisRunStatus": _RUN_STATUS,
    },
}


def status_problem(status: object) -> str | None:
    """The first malformed field of a Rollout status, as `status.field: message`."""
    return _problem(status, dict(_STATUS), "status")


def usable_conditions(status: Mapping[str, Any]) -> bool:
    """The conditions list can be read and updated (it is the one field the controller
    replaces when it reports a malformed status)."""
    return _problem(status.get("conditions"), [_CONDITION], "status.conditions") is None


def _problem(value: object, shape: _Shape, path: str) -> str | None:
    if value is None:
        return None
    if isinstance(shape, dict):
        if not isinstance(value, Mapping):
            return _wrong(path, "a mapping", value)
        for key, inner in shape.items():
            found = _problem(value.get(key), inner, f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(shape, list):
        if not isinstance(value, list):
            return _wrong(path, "a list", value)
        for index, item in enumerate(value):
            found = _problem(item, shape[0], f"{path}[{index}]")
            if found:
                return found
        return None
    return _scalar_problem(value, shape, path)


def _scalar_problem(value: object, kinds: type | tuple[type, ...], path: str) -> str | None:
    allowed = kinds if isinstance(kinds, tuple) else (kinds,)
    if isinstance(value, bool) and bool not in allowed:
        return _wrong(path, _names(allowed), value)  # a bool is an int to Python, not here
    if isinstance(value, allowed):
        return None
    return _wrong(path, _names(allowed), value)


def _names(kinds: tuple[type, ...]) -> str:
    words = {bool: "true or false", int: "an integer", str: "a string"}
    return " or ".join(words.get(k, k.__name__) for k in kinds)


def _wrong(path: str, expected: str, value: object) -> str:
    shown = repr(value) if not isinstance(value, bool) else str(value).lower()
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{path}: expected {expected}, found {shown} ({type(value).__name__})"
