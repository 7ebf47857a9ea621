"""The volume-claim controller: each PersistentVolumeClaim gets a directory of its own.

What a dynamic provisioner and the PV binder do on Kubernetes, for one machine:

* a claim with no `spec.volumeName` is provisioned: a PersistentVolume `pvc-<claim uid>` is
  created with `hostPath.path` a fresh directory `<state>/volumes/pvc-<claim uid>`, the
  claim's requested `storage` as its capacity (not enforced), its access modes, a `claimRef`
  to the claim and `persistentVolumeReclaimPolicy: Delete` (the default of a dynamically
  provisioned volume; change the PV to `Retain` to keep the data);
* the claim gets `spec.volumeName`, the finalizer `kubernetes.io/pvc-protection` and status
  `Bound` (with `accessModes` and `capacity`); the volume status `Bound`;
* a claim being deleted keeps its finalizer while a Pod that is not finished uses it, as the
  protection controller does, then goes;
* a volume whose claim is gone is reclaimed: `Delete` removes its directory and the PV,
  `Retain` leaves both and sets the PV `Released`.

The data outlives Pods: a restarted container, or a new Pod with the same claim (a
Deployment's replacement, a StatefulSet's `<name>-N` again), finds the same files.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import NotFound
from headway.cluster.local.workloads.recorder import note, reconcile_each
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj

__all__ = [
    "FIELD_MANAGER",
    "PROTECTION_FINALIZER",
    "claim_in_use",
    "claim_status",
    "provisioned_volume",
    "reclaim_action",
    "sync_volume_claims",
]

FIELD_MANAGER = "headway-volume-binder"
PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
_DEFAULT_SIZE = "1Gi"


def provisioned_volume(claim: Mapping[str, Any], directory: Path) -> Obj:
    """The PersistentVolume that holds `claim`'s data in `directory`. Purely computational."""
    meta = claim["metadata"]
    spec = claim.get("spec") or {}
    size = ((spec.get("resources") or {}).get("requests") or {}).get("storage") or _DEFAULT_SIZE
    volume_spec: dict[str, Any] = {
        "capacity": {"storage": str(size)},
        "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
        "persistentVolumeReclaimPolicy": "Delete",
        "volumeMode": str(spec.get("volumeMode") or "Filesystem"),
        "hostPath": {"path": str(directory), "type": "DirectoryOrCreate"},
        "claimRef": {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "namespace": str(meta.get("namespace") or "default"),
            "name": str(meta["name"]),
            "uid": str(meta.get("uid") or ""),
        },
    }
    if spec.get("storageClassName"):
        volume_spec["storageClassName"] = str(spec["storageClassName"])
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": volume_name(claim)},
        "spec": volume_spec,
    }


def volume_name(claim: Mapping[str, Any]) -> str:
    return f"pvc-{claim['metadata'].get('uid', '')}"


def claim_status(volume: Mapping[str, Any]) -> Obj:
    """A claim's status once bound to `volume`. Purely computational."""
    spec = volume.get("spec") or {}
    return {
        "phase": "Bound",
        "accessModes": list(spec.get("accessModes") or []),
        "capacity": dict(spec.get("capacity") or {}),
    }


def claim_in_use(claim: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a Pod that has not finished mounts `claim` (what keeps a deleted claim)."""
    name = claim["metadata"]["name"]
    for pod in pods:
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            if (volume.get("persistentVolumeClaim") or {}).get("claimName") == name:
                return True
    return False


def reclaim_action(volume: Mapping[str, Any], claim_uids: set[str]) -> str | None:
    """`delete`, `release` or None for a provisioned volume: its claim still exists (None),
    or is gone and the reclaim policy says what happens. Purely computational."""
    spec = volume.get("spec") or {}
    ref = spec.get("claimRef") or {}
    if not ref or str(ref.get("uid") or "") in claim_uids:
        return None
    if spec.get("persistentVolumeReclaimPolicy", "Delete") == "Delete":
        return "delete"
    return "release" if (volume.get("status") or {}).get("phase") != "Released" else None


def _bind(cluster: Cluster, clock: Clock, claim: Obj, volumes_root: Path) -> None:
    meta = claim["metadata"]
    namespace = str(meta.get("namespace") or "default")
    name = volume_name(claim)
    try:
        volume = cluster.get("v1", "PersistentVolume", name)
    except NotFound:
        directory = volumes_root / name
        directory.mkdir(parents=True, exist_ok=True)
        volume = cluster.apply(provisioned_volume(claim, directory), field_manager=FIELD_MANAGER)
        note(cluster, clock, claim, "ProvisioningSucceeded",
             f"Successfully provisioned volume {name} at {directory}")
    if (volume.get("status") or {}).get("phase") != "Bound":
        cluster.patch_status("v1", "PersistentVolume", name, None, {"phase": "Bound"})
    cluster.apply(
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": meta["name"], "namespace": namespace,
                      "finalizers": [PROTECTION_FINALIZER]},
         "spec": {"volumeName": name}},
        field_manager=FIELD_MANAGER, force=True,
    )
    status = claim_status(volume)
    if (claim.get("status") or {}) != status:
        cluster.patch_status("v1", "PersistentVolumeClaim", meta["name"], namespace, status)


def _release_claim(cluster: Cluster, claim: Obj) -> None:
    """Drop the protection finalizer (the binder's only one), so the store removes the claim."""
    meta = claim["metadata"]
    cluster.apply(
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": meta["name"], "namespace": meta.get("namespace") or "default"}},
        field_manager=FIELD_MANAGER, force=True,
    )


def reconcile_volume_claim(
    cluster: Cluster, clock: Clock, claim: Obj, *, volumes_root: Path
) -> float | None:
    meta = claim["metadata"]
    if meta.get("deletionTimestamp"):
        if PROTECTION_FINALIZER in (meta.get("finalizers") or []):
            pods = cluster.list("v1", "Pod", namespace=str(meta.get("namespace") or "default"))
            if not claim_in_use(claim, pods):
                _release_claim(cluster, claim)
        return None
    wanted = str((claim.get("spec") or {}).get("volumeName") or "")
    if wanted and wanted != volume_name(claim):
        _pending(cluster, clock, claim, f'volume "{wanted}" is not one this runtime '
                 "provisioned: only dynamically provisioned claims are bound locally")
        return None
    if not _bound(claim):
        _bind(cluster, clock, claim, volumes_root)
    return None


def _bound(claim: Obj) -> bool:
    return (
        (claim.get("status") or {}).get("phase") == "Bound"
        and (claim.get("spec") or {}).get("volumeName") == volume_name(claim)
        and PROTECTION_FINALIZER in (claim["metadata"].get("finalizers") or [])
    )


def _pending(cluster: Cluster, clock: Clock, claim: Obj, message: str) -> None:
    meta = claim["metadata"]
    if (claim.get("status") or {}).get("phase") != "Pending":
        cluster.patch_status("v1", "PersistentVolumeClaim", meta["name"],
                             meta.get("namespace"), {"phase": "Pending"})
        note(cluster, clock, claim, "ProvisioningFailed", message, warning=True)


def reconcile_volume(cluster: Cluster, clock: Clock, volume: Obj, claim_uids: set[str]) -> None:
    action = reclaim_action(volume, claim_uids)
    name = str(volume["metadata"]["name"])
    path = str(((volume.get("spec") or {}).get("hostPath") or {}).get("path") or "")
    if action == "delete":
        if path and Path(path).name == name:  # only a directory this runtime provisioned
            shutil.rmtree(path, ignore_errors=True)
        with contextlib.suppress(NotFound):
            cluster.delete("v1", "PersistentVolume", name)
    elif action == "release":
        cluster.patch_status("v1", "PersistentVolume", name, None, {"phase": "Released"})
        note(cluster, clock, volume, "VolumeReleased",
             f"claim gone; reclaim policy Retain keeps {path}")


def sync_volume_claims(cluster: Cluster, clock: Clock, *, volumes_root: Path) -> float | None:
    """One step for every claim, then every provisioned volume whose claim may be gone."""
    claims = cluster.list("v1", "PersistentVolumeClaim")
    reconcile_each(cluster, clock, claims,
                   lambda c: reconcile_volume_claim(cluster, clock, c, volumes_root=volumes_root))
    uids = {str(c["metadata"].get("uid") or "") for c in cluster.list("v1",
                                                                       "PersistentVolumeClaim")}
    return reconcile_each(cluster, clock, cluster.list("v1", "PersistentVolume"),
                          lambda v: reconcile_volume(cluster, clock, v, uids))
