"""Volumes as files: what each type holds, the kubelet's atomic layout, mount path rewriting."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from headway.cluster.local.kubelet.podenv import EnvConfigError
from headway.cluster.local.kubelet.volume_files import PodSandboxes, write_volume
from headway.cluster.local.kubelet.volumes import VolumeFile, rewrite_mount_paths, volume_plan

POD: dict[str, Any] = {
    "metadata": {"name": "web", "namespace": "shop", "uid": "1234abcd-0000",
                 "labels": {"app": "web", "tier": "front"}},
    "spec": {},
}
OBJECTS: dict[tuple[str, str], dict[str, Any]] = {
    ("ConfigMap", "settings"): {"data": {"app.yaml": "colour: blue\n", "mode": "fast"},
                                "binaryData": {"logo.bin": base64.b64encode(b"\x00\x01").decode()}},
    ("Secret", "creds"): {"data": {"token": base64.b64encode(b"s3cret").decode()}},
}


def lookup(kind: str, name: str) -> dict[str, Any] | None:
    return OBJECTS.get((kind, name))


def files(volume: dict[str, Any]) -> dict[str, tuple[bytes, int]]:
    plan = volume_plan(POD, volume, lookup)
    assert plan.files is not None
    return {f.path: (f.data, f.mode) for f in plan.files}


def test_a_config_map_is_one_file_per_key_with_the_default_mode() -> None:
    assert files({"name": "c", "configMap": {"name": "settings"}}) == {
        "app.yaml": (b"colour: blue\n", 0o644), "mode": (b"fast", 0o644),
        "logo.bin": (b"\x00\x01", 0o644),
    }


def test_items_choose_keys_paths_and_modes() -> None:
    volume = {"name": "c", "configMap": {"name": "settings", "defaultMode": 0o600, "items": [
        {"key": "app.yaml", "path": "conf/app.yaml"}, {"key": "mode", "path": "m", "mode": 0o400},
    ]}}
    assert files(volume) == {"conf/app.yaml": (b"colour: blue\n", 0o600), "m": (b"fast", 0o400)}


def test_a_secret_is_decoded() -> None:
    assert files({"name": "s", "secret": {"secretName": "creds"}}) == {"token": (b"s3cret", 0o644)}


def test_downward_api_and_projected_sources() -> None:
    volume = {"name": "p", "projected": {"defaultMode": 0o640, "sources": [
        {"configMap": {"name": "settings", "items": [{"key": "mode", "path": "mode"}]}},
        {"secret": {"name": "creds"}},
        {"downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                                   {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}},
    ]}}
    assert files(volume) == {
        "mode": (b"fast", 0o640), "token": (b"s3cret", 0o640),
        "labels": (b'app="web"\ntier="front"', 0o640), "name": (b"web", 0o640),
    }


@pytest.mark.parametrize(("volume", "message"), [
    ({"name": "c", "configMap": {"name": "absent"}}, 'configmap "absent" not found'),
    ({"name": "c", "configMap": {"name": "settings", "items": [{"key": "nope", "path": "x"}]}},
     'key "nope" not found'),
    ({"name": "c", "configMap": {"name": "settings", "items": [{"key": "mode", "path": "../x"}]}},
     "must be relative"),
    ({"name": "h", "hostPath": {"path": "/etc"}}, "hostPath is not supported"),
])
def test_what_cannot_be_mounted_is_a_config_error(volume: dict[str, Any], message: str) -> None:
    with pytest.raises(EnvConfigError, match=message):
        volume_plan(POD, volume, lookup)


def test_optional_sources_that_are_missing_give_an_empty_volume() -> None:
    assert files({"name": "c", "configMap": {"name": "absent", "optional": True}}) == {}


def test_the_atomic_layout_and_an_update(tmp_path: Path) -> None:
    root = tmp_path / "vol"
    assert write_volume(root, [VolumeFile("a", b"1", 0o644), VolumeFile("d/b", b"2", 0o600)])
    first = os.readlink(root / "..data")
    assert os.readlink(root / "a") == "..data/a" and (root / "d" / "b").read_bytes() == b"2"
    assert (root / "d" / "b").stat().st_mode & 0o777 == 0o600
    assert not write_volume(root, [VolumeFile("a", b"1", 0o644), VolumeFile("d/b", b"2", 0o600)])
    assert write_volume(root, [VolumeFile("a", b"changed", 0o644)])
    assert (root / "a").read_bytes() == b"changed"
    assert not (root / "d").exists() and not (root / first).exists()
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith("..")) == ["a"]


def test_a_sub_path_mount_is_a_copy_that_keeps_its_content(tmp_path: Path) -> None:
    pod = {**POD, "spec": {"volumes": [{"name": "c", "configMap": {"name": "settings"}},
                                       {"name": "scratch", "emptyDir": {}}]}}
    container = {"name": "main", "volumeMounts": [
        {"name": "c", "mountPath": "/etc/app/app.yaml", "subPath": "app.yaml"},
        {"name": "c", "mountPath": "/etc/config"},
        {"name": "scratch", "mountPath": "/tmp/scratch"},
    ]}
    sandboxes = PodSandboxes(tmp_path)
    places = dict(sandboxes.mount_places(pod, container, lookup))
    sandbox = tmp_path / "shop" / "web-1234abcd"
    assert places["/etc/config"] == str(sandbox / "volumes" / "c")
    assert Path(places["/tmp/scratch"]).is_dir()
    copied = Path(places["/etc/app/app.yaml"])
    assert copied.read_text() == "colour: blue\n" and not copied.is_symlink()
    sandboxes.remove(pod)
    assert not sandbox.exists()


def test_paths_under_a_mount_path_are_rewritten_and_no_others() -> None:
    places = [("/etc/config", "/state/v/c"), ("/data", "/state/v/d")]
    text = "--config=/etc/config/app.yaml /etc/configuration /data /database cat /etc/config"
    assert rewrite_mount_paths(text, places) == (
        "--config=/state/v/c/app.yaml /etc/configuration /state/v/d /database cat /state/v/c")
