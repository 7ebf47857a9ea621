"""Hypothesis strategies for multi-manager server-side apply sequences on a Deployment.

Values come from small pools so that managers keep touching the same fields: the same
labels, the same container names, the same env names and ports, which is where ownership,
conflicts and removal get interesting.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from cluster.ssa_oracle.oracle import Operation

_small_maps = st.dictionaries(st.sampled_from(["app", "tier", "team"]),
                              st.sampled_from(["a", "b"]), max_size=2)
_words = st.lists(st.sampled_from(["run", "--fast", "-v"]), max_size=2)

_env = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from(["A", "B", "C"])},
                          optional={"value": st.sampled_from(["1", "2"])}),
    max_size=2, unique_by=lambda e: e["name"],
)
_ports = st.lists(
    st.fixed_dictionaries({"containerPort": st.sampled_from([80, 443])},
                          optional={"name": st.sampled_from(["http", "web"]),
                                    "protocol": st.just("TCP")}),
    max_size=2, unique_by=lambda p: p["containerPort"],
)
_resources = st.fixed_dictionaries({}, optional={
    "limits": st.dictionaries(st.sampled_from(["cpu", "memory"]), st.sampled_from(["1", "2"]),
                              max_size=2),
    "requests": st.dictionaries(st.just("cpu"), st.sampled_from(["1", "2"]), max_size=1),
})
_mounts = st.lists(
    st.fixed_dictionaries({"mountPath": st.sampled_from(["/data", "/conf"])},
                          optional={"name": st.sampled_from(["data", "conf"]),
                                    "readOnly": st.booleans()}),
    max_size=2, unique_by=lambda m: m["mountPath"],
)
_volumes = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from(["data", "conf"])}, optional={
        "emptyDir": st.fixed_dictionaries({}, optional={"medium": st.just("Memory")}),
        "configMap": st.fixed_dictionaries({"name": st.sampled_from(["a", "b"])},
                                           optional={"optional": st.booleans()}),
    }),
    max_size=2, unique_by=lambda v: v["name"],
)


def _container_list(names: list[str]) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(
        st.fixed_dictionaries({"name": st.sampled_from(names)}, optional={
            "image": st.sampled_from(["app:1", "app:2"]),
            "args": _words,
            "command": _words,
            "env": _env,
            "ports": _ports,
            "resources": _resources,
            "volumeMounts": _mounts,
        }),
        max_size=2, unique_by=lambda c: c["name"],
    )


_containers = _container_list(["web", "side"])
_tolerations = st.lists(
    st.fixed_dictionaries({"key": st.sampled_from(["spot", "gpu"])},
                          optional={"operator": st.just("Exists"),
                                    "effect": st.just("NoSchedule")}),
    max_size=2,
)
_pod_spec = st.fixed_dictionaries({}, optional={
    "containers": _containers,
    "initContainers": _container_list(["init"]),
    "volumes": _volumes,
    "nodeSelector": _small_maps,
    "tolerations": _tolerations,
    "serviceAccountName": st.sampled_from(["web", "ops"]),
})
_metadata = st.fixed_dictionaries({}, optional={
    "labels": _small_maps,
    "annotations": _small_maps,
    "finalizers": st.lists(st.sampled_from(["x.io/a", "x.io/b"]), unique=True, max_size=2),
})
_spec = st.fixed_dictionaries({}, optional={
    "replicas": st.integers(1, 3),
    "paused": st.booleans(),
    "minReadySeconds": st.sampled_from([0, 5]),
    "selector": st.fixed_dictionaries({"matchLabels": _small_maps}),
    "template": st.fixed_dictionaries({}, optional={
        "metadata": st.fixed_dictionaries({}, optional={"labels": _small_maps}),
        "spec": _pod_spec,
    }),
})
contents: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {}, optional={"metadata": _metadata, "spec": _spec})

operations = st.builds(
    Operation,
    manager=st.sampled_from(["alice", "bob", "carol"]),
    operation=st.sampled_from(["Apply", "Apply", "Apply", "Update"]),
    content=contents,
    force=st.booleans(),
)
sequences = st.lists(operations, min_size=1, max_size=6)
