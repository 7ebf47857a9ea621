"""`antiAffinity`: keep a canary's (or preview's) pods off the nodes of the stable pods, as
Argo Rollouts writes it into the new ReplicaSet's pod template. Purely computational.

While an update runs (a stable ReplicaSet exists and is not the current one), the new
ReplicaSet's pod template gets, beside the user's own affinity, one pod anti-affinity term:

    labelSelector: {matchExpressions: [{key: rollouts-pod-template-hash, operator: In,
                                        values: [<stable hash>]}]}
    namespaces: [<rollout namespace>]
    topologyKey: kubernetes.io/hostname

as a `preferredDuringSchedulingIgnoredDuringExecution` entry with the configured `weight`, or
else a `requiredDuringSchedulingIgnoredDuringExecution` entry. When the stable ReplicaSet
changes while the new one is still not stable, the term is rewritten to name the new stable
hash. A ReplicaSet keeps the term once written (Argo never removes it).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from headway.rollout.replica_sets import HASH_LABEL

__all__ = ["injected_stable_hash", "with_anti_affinity", "without_injected_terms"]

_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def _term(stable_hash: str, namespace: str) -> dict[str, Any]:
    expression = {"key": HASH_LABEL, "operator": "In", "values": [stable_hash]}
    return {
        "labelSelector": {"matchExpressions": [expression]},
        "namespaces": [namespace],
        "topologyKey": "kubernetes.io/hostname",
    }


def _terms(pod_spec: Mapping[str, Any], preferred: bool) -> list[Any]:
    anti = ((pod_spec.get("affinity") or {}).get("podAntiAffinity") or {})
    return list(anti.get(_PREFERRED if preferred else _REQUIRED) or [])


def _injected_index(terms: list[Any], preferred: bool) -> int | None:
    for index, entry in enumerate(terms):
        term = (entry.get("podAffinityTerm") if preferred else entry) or {}
        expressions = (term.get("labelSelector") or {}).get("matchExpressions") or []
        if any(e.get("key") == HASH_LABEL for e in expressions):
            return index
    return None


def injected_stable_hash(pod_spec: Mapping[str, Any], anti_affinity: Mapping[str, Any]) -> str:
    """The stable hash named by the term injected earlier ('' when there is none)."""
    preferred = anti_affinity.get(_PREFERRED) is not None
    terms = _terms(pod_spec, preferred)
    index = _injected_index(terms, preferred)
    if index is None:
        return ""
    term = (terms[index].get("podAffinityTerm") if preferred else terms[index]) or {}
    for expression in (term.get("labelSelector") or {}).get("matchExpressions") or []:
        if expression.get("key") == HASH_LABEL and expression.get("values"):
            return str(expression["values"][0])
    return ""


def with_anti_affinity(
    pod_spec: Mapping[str, Any],
    anti_affinity: Mapping[str, Any] | None,
    *,
    stable_hash: str,
    current_hash: str,
    namespace: str,
) -> dict[str, Any]:
    """`pod_spec` with the term for `stable_hash` (replacing an injected one), or unchanged
    when there is no antiAffinity or no update running."""
    result = copy.deepcopy(dict(pod_spec))
    if not anti_affinity or not stable_hash or stable_hash == current_hash:
        return result
    preferred = anti_affinity.get(_PREFERRED) is not None
    if not preferred and anti_affinity.get(_REQUIRED) is None:
        return result
    term: dict[str, Any] = _term(stable_hash, namespace)
    if preferred:
        weight = (anti_affinity.get(_PREFERRED) or {}).get("weight")
        term = {"weight": weight, "podAffinityTerm": term}
    terms = _terms(result, preferred)
    index = _injected_index(terms, preferred)
    if index is None:
        terms.append(term)
    else:
        terms[index] = term
    affinity = result.setdefault("affinity", {})
    anti = affinity.setdefault("podAntiAffinity", {})
    anti[_PREFERRED if preferred else _REQUIRED] = terms
    return result


def without_injected_terms(pod_spec: Mapping[str, Any]) -> dict[str, Any]:
    """`pod_spec` with every term this module injected taken out (and the blocks it leaves
    empty), so a ReplicaSet's template reads as the Rollout's own again (`rollouts undo`)."""
    result = copy.deepcopy(dict(pod_spec))
    affinity = result.get("affinity")
    if not isinstance(affinity, dict) or not isinstance(affinity.get("podAntiAffinity"), dict):
        return result
    anti: dict[str, Any] = affinity["podAntiAffinity"]
    for key, preferred in ((_PREFERRED, True), (_REQUIRED, False)):
        terms = list(anti.get(key) or [])
        index = _injected_index(terms, preferred)
        if index is None:
            continue
        del terms[index]
        if terms:
            anti[key] = terms
        else:
            anti.pop(key)
    if not anti:
        affinity.pop("podAntiAffinity")
    if not affinity:
        result.pop("affinity")
    return result
