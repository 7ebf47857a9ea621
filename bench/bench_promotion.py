"""Promotion latency dev -> prod against the Applications' own sync+rollout times.

    .venv/bin/python bench/bench_promotion.py [--rounds 3]

Three environments on the local runtime (three Applications from one Git repository, each a
Rollout of examples/app with a two-step canary), one PromotionPipeline with autoPromote and no
approval gate (the human wait is not the pipeline's cost). Each round promotes a new tag into
dev and waits for prod's promotion to succeed.

* total: from `headway promote` (the Promotion written) to prod's promotion Succeeded;
* own: for each environment, from its promotion's commit (`status.committedAt`) to the moment
  its Application first showed the image live and Healthy with its Rollout finished (sampled
  from the store every 20 ms): what Argo CD + Argo Rollouts would take for that commit anyway;
* ratio = total / sum(own). The difference is the pipeline's overhead: noticing success,
  creating the next promotion, reading Git and committing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx2
import pygit2
import yaml

from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.engine import Engine, EngineSettings, Loop
from headway.kubetime import parse_time
from headway.promotion.controller import promotion_object
from headway.promotion.live import LiveState, judge_live
from headway.promotion.record import API_VERSION, KIND, PromotionSpec, read_spec, read_status

ARGO = "argoproj.io/v1alpha1"
IMAGE = "registry.local/web"
ENVS = ("dev", "staging", "prod")
APP = Path(__file__).resolve().parent.parent / "examples" / "app" / "server.py"
FIELD = "spec.template.spec.containers[name=app].image"


def _rollout(tag: str) -> dict[str, Any]:
    probe = {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 1}
    container = {"name": "app", "image": f"{IMAGE}:{tag}", "readinessProbe": probe}
    return {
        "apiVersion": ARGO, "kind": "Rollout", "metadata": {"name": "web"},
        "spec": {
            "replicas": 1, "revisionHistoryLimit": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"terminationGracePeriodSeconds": 1,
                                  "containers": [container]}},
            "strategy": {"canary": {"steps": [{"setWeight": 50}, {"pause": {"duration": "1s"}}]}},
        },
    }


def _seed_repo(path: Path) -> str:
    repo = pygit2.init_repository(str(path), bare=True, initial_head="main")
    index = pygit2.Index()
    for env in ENVS:
        blob = repo.create_blob(yaml.safe_dump(_rollout("v0"), sort_keys=False).encode())
        index.add(pygit2.IndexEntry(f"envs/{env}/rollout.yaml", blob,
                                    pygit2.enums.FileMode.BLOB))
    sig = pygit2.Signature("Dev", "dev@example.com")
    repo.create_commit("refs/heads/main", sig, sig, "v0", index.write_tree(repo), [])
    return path.as_uri()


def _objects(url: str) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
        for n in ("argocd", *ENVS)
    ]
    objs.append({"apiVersion": ARGO, "kind": "AppProject",
                 "metadata": {"name": "default", "namespace": "argocd"},
                 "spec": {"sourceRepos": ["*"],
                          "destinations": [{"server": "*", "namespace": "*"}]}})
    environments = [
        {"name": env, "application": f"web-{env}", "autoPromote": env != "prod",
         "healthyWithin": "5m",
         "target": {"file": f"envs/{env}/rollout.yaml",
                    "manifest": {"kind": "Rollout", "name": "web", "field": FIELD}}}
        for env in ENVS
    ]
    objs.append({"apiVersion": "headway.dev/v1alpha1", "kind": "PromotionPipeline",
                 "metadata": {"name": "web", "namespace": "argocd"},
                 "spec": {"image": IMAGE, "environments": environments}})
    for env in ENVS:
        objs.append({
            "apiVersion": ARGO, "kind": "Application",
            "metadata": {"name": f"web-{env}", "namespace": "argocd"},
            "spec": {"project": "default",
                     "source": {"repoURL": url, "path": f"envs/{env}", "targetRevision": "main"},
                     "destination": {"server": "https://kubernetes.default.svc",
                                     "namespace": env},
                     "syncPolicy": {"automated": {"prune": True}}},
        })
    return objs


def _live(runtime: Runtime, env: str, tag: str) -> bool:
    app = runtime.cluster.get(ARGO, "Application", f"web-{env}", "argocd")
    rollouts = [r for r in runtime.cluster.list(ARGO, "Rollout", namespace=env)]
    verdict = judge_live(app, rollouts, target=f"{IMAGE}:{tag}", moves_tag=True,
                         synced_to_commit=False)
    return verdict.state is LiveState.LIVE


def _promotions(runtime: Runtime, tag: str) -> dict[str, dict[str, Any]]:
    found = {}
    for obj in runtime.cluster.list(API_VERSION, KIND, namespace="argocd"):
        spec = read_spec(obj)
        if spec.image == f"{IMAGE}:{tag}":
            found[spec.environment] = obj
    return found


async def _round(runtime: Runtime, tag: str) -> tuple[float, list[float]]:
    clock = SystemClock()
    started = clock.now()
    spec = PromotionSpec(name=f"web-dev-{tag}", namespace="argocd", pipeline="web",
                         environment="dev", image=f"{IMAGE}:{tag}", author="bench",
                         requested_at=started)
    runtime.cluster.apply(promotion_object(spec), field_manager="bench")
    live_at: dict[str, datetime] = {}
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        for env in ENVS:
            if env not in live_at and _live(runtime, env, tag):
                live_at[env] = clock.now()
        found = _promotions(runtime, tag)
        prod = found.get("prod")
        if prod is not None and read_status(prod).phase.value == "Succeeded":
            break
        await asyncio.sleep(0.02)
    else:
        raise SystemExit(f"{tag} did not reach prod within 300 s")
    finished = read_status(prod).finished_at or clock.now()
    own = []
    for env in ENVS:
        committed = parse_time((found[env].get("status") or {}).get("committedAt"))
        assert committed is not None, env
        own.append((live_at[env] - committed).total_seconds())
    return (finished - started).total_seconds(), own


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        url = _seed_repo(base / "remote.git")
        config = base / "runtime.yaml"
        config.write_text(f"images:\n  {IMAGE}:\n    command: [{sys.executable!r}, {str(APP)!r}]\n"
                          "    versionFromTag: true\n")
        clock = SystemClock()
        runtime = Runtime(state_dir=base / "state", clock=clock, config_path=config,
                          shutdown_grace_seconds=2.0)
        for obj in _objects(url):
            runtime.cluster.apply(obj, field_manager="bench")
        loops = frozenset({Loop.APPLICATIONS, Loop.ROLLOUTS, Loop.PROMOTIONS})
        settings = EngineSettings(state_dir=base / "state", loops=loops, app_poll_seconds=3600,
                                  resync_seconds=5.0)
        stop = asyncio.Event()
        async with httpx2.AsyncClient() as http:
            engine = Engine(cluster=runtime.cluster, clock=clock, http=http, settings=settings)
            tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(engine.run(stop))]
            try:
                while not all(_live(runtime, env, "v0") for env in ENVS):
                    await asyncio.sleep(0.2)
                ratios = []
                for n in range(1, rounds + 1):
                    total, own = await _round(runtime, f"v{n}")
                    ratios.append(total / sum(own))
                    parts = ", ".join(f"{e} {o:.2f} s" for e, o in zip(ENVS, own, strict=True))
                    print(f"round {n}: dev->prod {total:.2f} s; own sync+rollout {sum(own):.2f} s "
                          f"({parts}); ratio {total / sum(own):.2f}, overhead "
                          f"{total - sum(own):.2f} s", flush=True)
                print(f"median ratio over {rounds} rounds: {statistics.median(ratios):.2f}")
            finally:
                stop.set()
                await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(parser.parse_args().rounds))
