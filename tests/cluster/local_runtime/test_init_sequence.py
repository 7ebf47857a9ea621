"""Which init containers run now, and when the Pod is initialized (pure)."""

from __future__ import annotations

from headway.cluster.local.kubelet.containers import ContainerRun
from headway.cluster.local.kubelet.init_sequence import container_policy, init_progress

SPECS = [{"name": "migrate"}, {"name": "proxy", "restartPolicy": "Always"}, {"name": "seed"}]


def runs(**states: ContainerRun) -> dict[str, ContainerRun]:
    fresh = {s["name"]: ContainerRun(name=s["name"], image="") for s in SPECS}
    return {**fresh, **states}


def exited(name: str, code: int) -> ContainerRun:
    run = ContainerRun(name=name, image="", done=True)
    run.terminated = {"exitCode": code}
    return run


def test_one_init_container_at_a_time_sidecars_kept_once_started() -> None:
    assert init_progress(SPECS, runs()).step == ("migrate",)
    after_migrate = runs(migrate=exited("migrate", 0))
    assert init_progress(SPECS, after_migrate).step == ("proxy",)  # waits for it to start
    started = ContainerRun(name="proxy", image="", handle=object())  # type: ignore[arg-type]
    progress = init_progress(SPECS, {**after_migrate, "proxy": started})
    assert progress.step == ("proxy", "seed")
    assert not progress.initialized
    assert progress.waiting_for == ("seed",)
    done = init_progress(SPECS, {**after_migrate, "proxy": started, "seed": exited("seed", 0)})
    assert done.initialized
    assert done.step == ("proxy",)


def test_a_sidecar_with_a_startup_probe_holds_the_next_one_until_it_passes() -> None:
    probing = ContainerRun(name="proxy", image="", handle=object(),  # type: ignore[arg-type]
                           startup_pending=True)
    progress = init_progress(SPECS, runs(migrate=exited("migrate", 0), proxy=probing))
    assert progress.step == ("proxy",)


def test_an_init_container_failed_for_good_fails_the_pod() -> None:
    progress = init_progress(SPECS, runs(migrate=exited("migrate", 1)))
    assert progress.failed
    assert not progress.initialized


def test_restart_policies_of_init_containers() -> None:
    assert container_policy("Always", {"name": "m"}, init=True) == "OnFailure"
    assert container_policy("OnFailure", {"name": "m"}, init=True) == "OnFailure"
    assert container_policy("Never", {"name": "m"}, init=True) == "Never"
    assert container_policy("Never", SPECS[1], init=True) == "Always"
    assert container_policy("Never", {"name": "app"}, init=False) == "Never"
