"""A container's environment, as the kubelet builds it, and `$(VAR)` expansion.

Order (later wins): `envFrom` sources in order, then `env` entries in order. Values may
refer to earlier variables as `$(NAME)`; `$$(NAME)` stays literal. ConfigMap `data` is
used as is; Secret `data` is base64 and decoded (`stringData` is accepted too). A missing
object or key that is not `optional` is a `CreateContainerConfigError`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "EnvConfigError",
    "ObjectLookup",
    "expand_references",
    "field_value",
    "resolve_container_env",
]

ObjectLookup = Callable[[str, str], Mapping[str, Any] | None]
"""(kind, name) -> the ConfigMap or Secret in the pod's namespace, or None."""

_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


class EnvConfigError(Exception):
    """A referenced ConfigMap, Secret or key is missing (the kubelet's config error)."""


def expand_references(text: str, env: Mapping[str, str]) -> str:
    """Replace `$(NAME)` by the variable's value; unknown references stay as written."""

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env.get(name, match.group(0))

    return _REFERENCE.sub(one, text)


def _source_data(kind: str, obj: Mapping[str, Any]) -> dict[str, str]:
    if kind == "ConfigMap":
        return {str(k): str(v) for k, v in (obj.get("data") or {}).items()}
    data: dict[str, str] = {}
    for key, value in (obj.get("data") or {}).items():
        try:
            data[str(key)] = base64.b64decode(str(value), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError) as err:
            raise EnvConfigError(f'secret key "{key}" is not valid base64 text: {err}') from err
    data.update({str(k): str(v) for k, v in (obj.get("stringData") or {}).items()})
    return data


def _lookup_data(
    lookup: ObjectLookup, kind: str, name: str, optional: bool
) -> dict[str, str] | None:
    obj = lookup(kind, name)
    if obj is None:
        if optional:
            return None
        raise EnvConfigError(f'{kind.lower()} "{name}" not found')
    return _source_data(kind, obj)


def field_value(pod: Mapping[str, Any], path: str) -> str:
    meta = pod.get("metadata") or {}
    bracket = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if bracket:
        return str((meta.get(bracket.group(1)) or {}).get(bracket.group(2), ""))
    simple = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace") or "default",
        "metadata.uid": meta.get("uid"),
        "status.podIP": "127.0.0.1",
        "status.hostIP": "127.0.0.1",
        "spec.nodeName": "localhost",
        "spec.serviceAccountName": (pod.get("spec") or {}).get("serviceAccountName", "default"),
    }
    if path in simple:
        return str(simple[path] or "")
    if path in ("metadata.labels", "metadata.annotations"):
        values = meta.get(path.split(".")[1]) or {}
        return "\n".join(f'{k}="{v}"' for k, v in sorted(values.items()))
    raise EnvConfigError(f'unsupported fieldRef fieldPath "{path}"')


def _value_from(pod: Mapping[str, Any], ref: Mapping[str, Any], lookup: ObjectLookup) -> str | None:
    for key, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
        if key in ref:
            spec = ref[key] or {}
            optional = bool(spec.get("optional", False))
            data = _lookup_data(lookup, kind, str(spec.get("name", "")), optional)
            wanted = str(spec.get("key", ""))
            if data is None or wanted not in data:
                if optional:
                    return None
                raise EnvConfigError(f"couldn't find key {wanted} in {kind} {spec.get('name')}")
            return data[wanted]
    if "fieldRef" in ref:
        return field_value(pod, str((ref["fieldRef"] or {}).get("fieldPath", "")))
    raise EnvConfigError(f"unsupported valueFrom: {sorted(ref)}")


def resolve_container_env(
    pod: Mapping[str, Any], container: Mapping[str, Any], lookup: ObjectLookup
) -> dict[str, str]:
    """The variables a container declares (envFrom, then env), references expanded."""
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        prefix = str(source.get("prefix") or "")
        for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            if key in source:
                ref = source[key] or {}
                data = _lookup_data(
                    lookup, kind, str(ref.get("name", "")), bool(ref.get("optional"))
                )
                env.update({prefix + k: v for k, v in (data or {}).items()})
    for item in container.get("env") or []:
        name = str(item.get("name", ""))
        if "valueFrom" in item:
            value = _value_from(pod, item["valueFrom"] or {}, lookup)
            if value is not None:
                env[name] = value
        else:
            env[name] = expand_references(str(item.get("value", "")), env)
    return env
