"""From a Promotion to its environment: the `PromotionPipeline` it names (stored beside it,
`headway apply -f pipeline.yaml`), the environment's settings as a lifecycle `Stage`, and the
repository edge its commits go through.

Anything missing (the pipeline, the environment, the Application, a repository to write to)
is a reason, not an exception: the controller shows it on the promotion and commits nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx2
import pygit2

from headway.appset.forge_policy import ForgePolicy
from headway.cluster.errors import NotFound
from headway.cluster.protocol import Cluster
from headway.controllers.convergence.git import BranchWriter, open_branch
from headway.model.diagnostics import Severity
from headway.model.promotion_pipeline import (
    PIPELINE_GROUP,
    PIPELINE_KIND,
    PIPELINE_VERSION,
    Environment,
    PromotionPipeline,
    parse_promotion_pipeline,
)
from headway.model.yamlload import Document
from headway.promotion import classify
from headway.promotion.environment_repo import ConfigCheck, GitEnvironment
from headway.promotion.facts import ARGO_API, Resolved
from headway.promotion.forge import Forge
from headway.promotion.forge_approvals import ForgeApprovals
from headway.promotion.forge_branch import PullRequestBranch
from headway.promotion.forge_setup import forge_for
from headway.promotion.lifecycle import Stage
from headway.promotion.record import PromotionSpec
from headway.source.errors import SourceError
from headway.source.git import GitCache
from headway.source.git_commits import BotIdentity
from headway.source.spec import raw_sources

__all__ = ["PIPELINE_API", "FetchOncePerStep", "PipelineResolver", "load_pipeline", "stage_of"]

PIPELINE_API = f"{PIPELINE_GROUP}/{PIPELINE_VERSION}"


def load_pipeline(cluster: Cluster, name: str, namespace: str) -> PromotionPipeline | str:
    """The stored pipeline, parsed; or what is wrong with it."""
    try:
        obj = cluster.get(PIPELINE_API, PIPELINE_KIND, name, namespace)
    except NotFound:
        return f"PromotionPipeline {namespace}/{name} not found (headway apply -f it)"
    where = f"PromotionPipeline {namespace}/{name}"
    pipeline, diagnostics = parse_promotion_pipeline(Document(obj, where, 0, 0))
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if pipeline is None or errors:
        return "; ".join(f"{where}: {d.field}: {d.message}" for d in errors) or where
    return pipeline


def stage_of(pipeline: PromotionPipeline, env: Environment) -> Stage:
    names = [e.name for e in pipeline.spec.environments]
    index = names.index(env.name)
    following = pipeline.next_environment(env.name)
    approval = env.gate.approval
    return Stage(
        environment=env.name,
        application=env.application,
        approval_required=approval.required,
        approvers=approval.approvers,
        approval_timeout=approval.timeout,
        health_deadline=env.healthy_within,
        previous=names[index - 1] if index > 0 else "",
        auto_next=following.name if following is not None and env.auto_promote else "",
    )


class FetchOncePerStep:
    """A branch writer whose `refresh` (a fetch, for a remote) runs once per promotion step,
    however many facts the step reads; a write, made or refused, makes the next one real.

    The resolver wraps the branch anew for every step, so a step sees one tip throughout and
    a remote is fetched once per step, not once per question."""

    def __init__(self, writer: BranchWriter) -> None:
        self._writer = writer
        self._tip: str | None = None

    @property
    def repo(self) -> pygit2.Repository:
        return self._writer.repo

    @property
    def branch(self) -> str:
        return self._writer.branch

    @property
    def remote(self) -> bool:
        return self._writer.remote

    def refresh(self) -> str:
        if self._tip is None:
            self._tip = self._writer.refresh()
        return self._tip

    def write(self, *, parent: str, edits: Mapping[str, bytes], message: str) -> str:
        self._tip = None
        return self._writer.write(parent=parent, edits=edits, message=message)


class PipelineResolver:
    """The engine's `StageResolver`: pipelines from the store, branches from the Git cache."""

    def __init__(
        self,
        cluster: Cluster,
        *,
        git: GitCache,
        identity: BotIdentity | None = None,
        config_check: Callable[[Environment], ConfigCheck] | None = classify.config_check,
        forge_policy: ForgePolicy | None = None,
    ) -> None:
        self._cluster = cluster
        self._forge_policy = forge_policy or ForgePolicy()
        self._git = git
        self._identity = identity or BotIdentity("Headway", "headway@localhost")
        self._config_check = config_check
        self._writers: dict[tuple[str, str], BranchWriter] = {}
        self._http: httpx2.Client | None = None  # made on the first pipeline with a forge

    def __call__(self, spec: PromotionSpec) -> Resolved | str:
        pipeline = load_pipeline(self._cluster, spec.pipeline, spec.namespace)
        if isinstance(pipeline, str):
            return pipeline
        env = pipeline.environment(spec.environment)
        if env is None:
            return f"pipeline {spec.pipeline} has no environment {spec.environment!r}"
        app_namespace = env.application_namespace or spec.namespace
        try:
            app = self._cluster.get(ARGO_API, "Application", env.application, app_namespace)
        except NotFound:
            return f"Application {app_namespace}/{env.application} not found"
        sources = raw_sources(app)
        url = pipeline.spec.repo_url or (str(sources[0].get("repoURL") or "") if sources else "")
        revision = pipeline.spec.target_revision or (
            str(sources[0].get("targetRevision") or "HEAD") if sources else "HEAD"
        )
        if not url:
            return f"Application {env.application} names no repository to commit to"
        forge = self._forge(url, pipeline, spec.namespace)
        if isinstance(forge, str):
            return forge
        try:
            writer = self._writer(url, revision, forge)
        except SourceError as err:
            return f"cannot write to {url} {revision}: {err}"
        check = self._config_check(env) if self._config_check is not None else None
        repo = GitEnvironment(
            writer=FetchOncePerStep(writer),
            env=env,
            repository=pipeline.spec.image,
            config_check=check,
        )
        approvals = ForgeApprovals(forge) if forge is not None else None
        return Resolved(stage_of(pipeline, env), app_namespace, repo, approvals)

    def _forge(self, url: str, pipeline: PromotionPipeline, namespace: str) -> Forge | str | None:
        """The pipeline's forge (not cached: its token Secret is read again, so a rotated
        token takes effect on the next step), None without one, or why it cannot be had."""
        settings = pipeline.spec.forge
        if settings is None:
            return None
        if self._http is None:
            self._http = httpx2.Client(timeout=30.0)
        return forge_for(
            settings, cluster=self._cluster, namespace=namespace, url=url, client=self._http,
            policy=self._forge_policy,
        )

    def _writer(self, url: str, revision: str, forge: Forge | None) -> BranchWriter:
        """Direct commits, or pull requests when the pipeline names a forge."""
        if forge is not None:
            return PullRequestBranch(self._git.repository(url), revision, self._identity, forge)
        if (url, revision) not in self._writers:
            self._writers[(url, revision)] = open_branch(self._git, url, revision, self._identity)
        return self._writers[(url, revision)]
