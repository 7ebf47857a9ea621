"""Router fields the Application controller leaves to Headway's own Rollout controller.

A Rollout with traffic routing writes weights (and a hash label, an ALB action) into router
objects that its Application renders from Git (`rollout/route_fields.py`). Argo CD compares
and syncs those fields like any other, so a sync or a self-heal mid-canary writes Git's
weights back and the traffic flaps, unless every Application carries an `ignoreDifferences`
entry for them and `RespectIgnoreDifferences=true` (seed 000). Headway runs both controllers,
so it knows: the fields a Rollout of the same Application writes are compared and applied as
if the Application ignored them and respected the ignore (deliberately safer than Argo CD;
docs/compatibility.md). An object the Rollout does not name, or a new one (nothing live yet),
is applied from Git as written.

`owned_rules(objects)` returns those fields as compiled ignore rules whose `origin` names the
Rollout (`OWNED_ORIGIN_PREFIX`), and an identity for the comparison cache; the sync applies
rules of that origin whatever the Application's sync options say.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import jq

from headway.diff import CompiledRule, compile_rules
from headway.model.application import IgnoreDifferences
from headway.rollout.route_fields import route_fields
from headway.sync.comparison import Comparison
from headway.sync.resources import key_of

__all__ = ["OWNED_ORIGIN_PREFIX", "is_owned", "owned_field_notes", "owned_rules"]

OWNED_ORIGIN_PREFIX = "Rollout "
_COMPILED: dict[str, tuple[CompiledRule, ...]] = {}
_KEEP = 1024


def is_owned(rule: CompiledRule) -> bool:
    """Whether `rule` stands for fields a Rollout writes (see `owned_rules`)."""
    return rule.origin.startswith(OWNED_ORIGIN_PREFIX)


def owned_rules(objects: Sequence[Mapping[str, Any]]) -> tuple[tuple[CompiledRule, ...], str]:
    """The ignore rules for the router fields a Rollout among `objects` writes, and their
    identity ("" and no rules when there are none)."""
    fields = list(route_fields(objects))
    if not fields:
        return (), ""
    entries = [
        IgnoreDifferences(
            group=str(f.route.get("apiVersion", "")).rpartition("/")[0],
            kind=str(f.route.get("kind", "")),
            name=str((f.route.get("metadata") or {}).get("name") or "") or None,
            namespace=None,
            json_pointers=(),
            jq_path_expressions=(f.jq,),
            managed_fields_managers=(),
        )
        for f in fields
    ]
    identity = ";".join(
        f"{f.rollout}:{e.group}/{e.kind}/{e.name}:{f.jq}"
        for f, e in zip(fields, entries, strict=True)
    )
    compiled = _COMPILED.get(identity)
    if compiled is None:
        compiled = tuple(
            replace(rule, origin=f"{OWNED_ORIGIN_PREFIX}{f.rollout}")
            for f, rule in zip(fields, compile_rules(entries), strict=True)
        )
        if len(_COMPILED) >= _KEEP:
            _COMPILED.clear()
        _COMPILED[identity] = compiled
    return compiled, identity


def owned_field_notes(comparison: Comparison, namespace: str) -> list[str]:
    """One line per router field a Rollout holds at a value other than Git's: what a diff
    of the app leaves out, said rather than hidden (`headway app diff` prints them)."""
    notes: list[str] = []
    for field in route_fields(comparison.desired):
        key = key_of(field.route, default_namespace=namespace)
        live = comparison.live.get(key)
        if live is None:
            continue
        program = jq.compile(f"[{field.jq}]")
        in_git = program.input_value(field.route).first()
        in_live = program.input_value(live).first()
        if in_git != in_live:
            notes.append(
                f"{key.kind}/{key.name} {field.jq}: {in_live} live, {in_git} in Git: left to "
                f"Rollout/{field.rollout}, which sets them during a canary (not a difference)"
            )
    return notes
