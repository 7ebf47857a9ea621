"""The runtime's one Node, `localhost`, registered as a kubelet registers its node.

Its `status.capacity` and `allocatable` are the machine's CPUs and memory (`MemTotal`) and
110 Pods (the kubelet's default), with a `Ready` condition and `nodeInfo`, so `kubectl get
nodes` and `kubectl top node` (which divides NodeMetrics by `allocatable`) work. Written
once at start-up, and again when a runtime finds it changed.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from headway.clock import Clock
from headway.cluster.protocol import Cluster
from headway.kubetime import format_time
from headway.model.obj import Obj

__all__ = ["NODE_NAME", "register_node"]

NODE_NAME = "localhost"
FIELD_MANAGER = "headway-kubelet"


def _memory_kib() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def node_status(clock: Clock) -> Obj:
    resources = {"cpu": str(os.cpu_count() or 1), "memory": f"{_memory_kib()}Ki",
                 "pods": "110"}
    now = format_time(clock.now())
    return {
        "capacity": resources,
        "allocatable": resources,
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "the Headway runtime is posting ready status",
                        "lastHeartbeatTime": now, "lastTransitionTime": now}],
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
                      {"type": "Hostname", "address": NODE_NAME}],
        "nodeInfo": {"operatingSystem": "linux", "architecture": platform.machine(),
                     "kernelVersion": platform.release(), "kubeletVersion": "headway",
                     "containerRuntimeVersion": "process://", "osImage": platform.system(),
                     "machineID": "", "systemUUID": "", "bootID": "",
                     "kubeProxyVersion": ""},
    }


def register_node(cluster: Cluster, clock: Clock) -> None:
    cluster.apply({"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": NODE_NAME,
                                "labels": {"kubernetes.io/hostname": NODE_NAME,
                                           "kubernetes.io/os": "linux"}}},
                  field_manager=FIELD_MANAGER)
    cluster.patch_status("v1", "Node", NODE_NAME, None, node_status(clock))
