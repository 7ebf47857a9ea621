"""status.summary.images lists what the app's live workloads run: the signal a promotion
checks for "target image live" (Synced alone is not it)."""

from __future__ import annotations

from headway.controllers.app.report import live_images


def test_images_of_every_workload_kind_sorted_and_unique() -> None:
    def template(*images: str) -> dict[str, object]:
        containers = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
        return {"template": {"spec": {"containers": containers}}}

    live = [
        {"kind": "Deployment", "spec": template("web:v2", "sidecar:1")},
        {"kind": "Rollout", "spec": template("api:v7")},
        {"kind": "Pod", "spec": {"initContainers": [{"name": "i", "image": "init:3"}]}},
        {"kind": "CronJob", "spec": {"jobTemplate": {"spec": template("web:v2")}}},
        {"kind": "Service", "spec": {"ports": [{"port": 80}]}},
    ]
    assert live_images(live) == ["api:v7", "init:3", "sidecar:1", "web:v2"]
