"""The stage of the end-to-end promotion tests: one Git repository holding three environments
(three Applications syncing envs/dev, envs/staging, envs/prod), each a Rollout of
examples/app running as real processes on the local runtime, the controllers `headway serve`
runs for them (Applications, Rollouts, Git convergence, promotions) in this process, and the
CLI run in-process against the same store.

A tag listed as bad never answers /readyz: dev has no readiness probe (it accepts anything
that starts), staging and prod do, and abort a Rollout that makes no progress in 10 s
(`progressDeadlineAbort`), as a team that gates staging on readiness would.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pygit2
import yaml
from typer.testing import CliRunner

from e2e_sync.e2e_helpers import APP_SERVER, Remote, default_project, dump
from headway.cli.main import _register_all, app
from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.engine import Engine, EngineSettings, Loop
from headway.kubetime import format_precise_time
from headway.model.obj import Obj
from headway.promotion.record import API_VERSION, KIND, read_spec, read_status
from polling import eventually

ARGO = "argoproj.io/v1alpha1"
IMAGE = "registry.local/web"
ENVS = ("dev", "staging", "prod")
FIELD = "spec.template.spec.containers[name=app].image"
LOOPS = frozenset({Loop.APPLICATIONS, Loop.ROLLOUTS, Loop.GIT_CONVERGENCE, Loop.PROMOTIONS})

_register_all()
_runner = CliRunner()


def runtime_config(path: Path, bad_tags: str) -> Path:
    wrapper = (
        'case " $BAD_TAGS " in *" $HEADWAY_IMAGE_TAG "*) export READY_AFTER_SECONDS=100000;; '
        f'esac; exec "{sys.executable}" "{APP_SERVER}"'
    )
    path.write_text(
        f"images:\n  {IMAGE}:\n    command: [/bin/sh, -c, {wrapper!r}]\n"
        f"    env: {{BAD_TAGS: {bad_tags!r}}}\n    versionFromTag: true\n"
    )
    return path


def rollout(env: str, tag: str, extra_env: dict[str, str] | None = None) -> Obj:
    container: dict[str, Any] = {
        "name": "app",
        "image": f"{IMAGE}:{tag}",
        "env": [{"name": k, "value": v} for k, v in (extra_env or {"LOG_LEVEL": "info"}).items()],
    }
    if env != "dev":
        container["readinessProbe"] = {"httpGet": {"path": "/readyz", "port": 8080},
                                       "periodSeconds": 1}
    return {
        "apiVersion": ARGO,
        "kind": "Rollout",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "revisionHistoryLimit": 2,
            "progressDeadlineSeconds": 10,
            "progressDeadlineAbort": True,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"terminationGracePeriodSeconds": 1, "containers": [container]},
            },
            "strategy": {"canary": {"steps": [{"setWeight": 50}, {"pause": {"duration": "1s"}}],
                                    "abortScaleDownDelaySeconds": 1}},
        },
    }


def pipeline(*, staging_gate: dict[str, Any] | None = None, prod_timeout: str = "40s") -> Obj:
    def env(name: str, **more: Any) -> dict[str, Any]:
        target = {"file": f"envs/{name}/rollout.yaml",
                  "manifest": {"kind": "Rollout", "name": "web", "field": FIELD}}
        return {"name": name, "application": f"web-{name}", "target": target,
                "healthyWithin": "90s", **more}

    staging = env("staging", autoPromote=True)
    if staging_gate is not None:
        staging["gate"] = staging_gate
    prod_gate = {
        "approval": {"required": True, "approvers": ["lead", "dev"], "timeout": prod_timeout}
    }
    return {
        "apiVersion": "headway.dev/v1alpha1",
        "kind": "PromotionPipeline",
        "metadata": {"name": "web", "namespace": "argocd"},
        "spec": {"image": IMAGE, "environments": [
            env("dev", autoPromote=True), staging, env("prod", gate=prod_gate)]},
    }


def application(env: str, url: str) -> Obj:
    return {
        "apiVersion": ARGO,
        "kind": "Application",
        "metadata": {"name": f"web-{env}", "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {"repoURL": url, "path": f"envs/{env}", "targetRevision": "main"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": env},
            "syncPolicy": {"automated": {"prune": True, "selfHeal": True}},
        },
    }


class PromotionStage:
    def __init__(self, tmp_path: Path, runtime: Runtime, remote: Remote) -> None:
        self.tmp_path = tmp_path
        self.runtime = runtime
        self.remote = remote
        self.cluster = runtime.cluster

    # ---- the CLI, in-process, against the same store --------------------------------------

    def cli(self, *args: str, code: int = 0) -> str:
        result = _runner.invoke(app, [*args, "--state-dir", str(self.tmp_path / "state")])
        assert result.exit_code == code, (args, result.output)
        return result.output

    # ---- what the store and Git say -------------------------------------------------------

    def promotions(self, env: str | None = None) -> list[Obj]:
        found = self.cluster.list(API_VERSION, KIND, namespace="argocd")
        mine = [p for p in found if env is None or read_spec(p).environment == env]
        return sorted(mine, key=lambda p: (read_spec(p).requested_at, p["metadata"]["name"]))

    def phase(self, name: str) -> str:
        return read_status(self.cluster.get(API_VERSION, KIND, name, "argocd")).phase.value

    def status(self, name: str) -> dict[str, Any]:
        return dict(self.cluster.get(API_VERSION, KIND, name, "argocd").get("status") or {})

    def newest(self, env: str, image_tag: str) -> str:
        found = [p for p in self.promotions(env) if read_spec(p).image.endswith(f":{image_tag}")]
        return str(found[-1]["metadata"]["name"]) if found else ""

    def pinned(self, env: str) -> str:
        text = self.file(f"envs/{env}/rollout.yaml")
        return str(yaml.safe_load(text)["spec"]["template"]["spec"]["containers"][0]["image"])

    def file(self, path: str) -> str:
        repo = self.remote.repo
        tree = repo[repo.references["refs/heads/main"].target].peel(pygit2.Commit).tree
        return bytes(tree[path].data).decode()

    def log(self) -> list[pygit2.Commit]:
        repo = self.remote.repo
        walker = repo.walk(repo.references["refs/heads/main"].target)
        return list(walker)

    def app_runs(self, env: str, tag: str) -> bool:
        found = self.cluster.get(ARGO, "Application", f"web-{env}", "argocd")
        status = found.get("status") or {}
        images = (status.get("summary") or {}).get("images") or []
        healthy = (status.get("health") or {}).get("status") == "Healthy"
        return healthy and f"{IMAGE}:{tag}" in images

    async def until_phase(self, name_of: Any, phase: str, timeout: float, what: str) -> str:
        """Wait for the promotion `name_of()` names (a callable: it may not exist yet)."""
        def check() -> str:
            name = name_of()
            return name if name and self.phase(name) == phase else ""
        try:
            return str(await eventually(check, timeout=timeout, what=what))
        except AssertionError as err:
            raise AssertionError(f"{err}\npromotions:\n{self.summary()}") from None

    def summary(self) -> str:
        return "\n".join(
            f"  {p['metadata']['name']} {read_spec(p).environment} {read_spec(p).image}: "
            f"{read_status(p).phase.value}: {read_status(p).message}"
            for p in self.promotions()
        )

    def write_decision(self, name: str, verdict: str, by: str) -> None:
        """A decision written straight into the store, past the CLI's checks."""
        obj = self.cluster.get(API_VERSION, KIND, name, "argocd")
        at = format_precise_time(SystemClock().now())
        obj["spec"]["decisions"] = [{"decision": verdict, "by": by, "at": at, "via": "store"}]
        self.cluster.update(obj, field_manager="someone-with-store-access")

    def commit_by_hand(self, env: str, **env_vars: str) -> str:
        obj = yaml.safe_load(self.file(f"envs/{env}/rollout.yaml"))
        tag = obj["spec"]["template"]["spec"]["containers"][0]["image"].rsplit(":", 1)[1]
        return self.remote.commit({f"envs/{env}/rollout.yaml": dump(rollout(env, tag, env_vars))},
                                  "tune the log level by hand")


@contextlib.asynccontextmanager
async def promotion_stage(
    tmp_path: Path, pipeline_obj: Obj, *, bad_tags: str = "", in_process: bool = True
) -> AsyncIterator[PromotionStage]:
    """`in_process=False`: no engine here; the controllers are `headway serve` processes the
    test runs over `tmp_path/state`."""
    remote = Remote(tmp_path / "remote.git")
    remote.commit({f"envs/{env}/rollout.yaml": dump(rollout(env, "v1")) for env in ENVS}, "v1")
    clock = SystemClock()
    state = tmp_path / "state"
    runtime = Runtime(state_dir=state, clock=clock, shutdown_grace_seconds=2.0,
                      config_path=runtime_config(tmp_path / "runtime.yaml", bad_tags))
    stage = PromotionStage(tmp_path, runtime, remote)
    for name in ("argocd", *ENVS):
        stage.cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
                            field_manager="test")
    stage.cluster.apply(default_project(), field_manager="test")
    stage.cluster.apply(copy.deepcopy(pipeline_obj), field_manager="test")
    for env in ENVS:
        stage.cluster.apply(application(env, remote.url), field_manager="test")
    settings = EngineSettings(state_dir=state, loops=LOOPS, app_poll_seconds=3600,
                              resync_seconds=5.0)
    stop = asyncio.Event()
    async with httpx2.AsyncClient() as http:
        tasks = [asyncio.create_task(runtime.run(stop))]
        if in_process:
            engine = Engine(cluster=runtime.cluster, clock=clock, http=http, settings=settings)
            tasks.append(asyncio.create_task(engine.run(stop)))
        try:
            await eventually(lambda: all(stage.app_runs(env, "v1") for env in ENVS),
                             timeout=90, what="every environment Healthy on v1")
            yield stage
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
