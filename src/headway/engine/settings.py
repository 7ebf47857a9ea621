"""What an embedded engine runs, and how: `EngineSettings`, a frozen value a program builds once.

`headway serve` fills it from its flags; a program embedding Headway builds one directly.
Every field has the default `headway serve` uses, so `EngineSettings()` is a working engine
over `.headway/`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from headway.appset.forge_policy import ForgePolicy
from headway.controllers.app.sources import DEFAULT_POLL_SECONDS
from headway.source.chart_cache import DEFAULT_MAX_BYTES as DEFAULT_CHART_CACHE_BYTES
from headway.source.plugins import DEFAULT_TIMEOUT_SECONDS as DEFAULT_PLUGIN_TIMEOUT_SECONDS

__all__ = ["ALL_LOOPS", "CONTROLLER_NAMES", "EngineSettings", "Loop", "controller_names"]


class Loop(enum.Enum):
    """A family of controllers the engine can run."""

    ROLLOUTS = "rollouts"
    ANALYSIS = "analysis"
    APPLICATIONS = "applications"
    GIT_CONVERGENCE = "git-convergence"
    NOTIFICATIONS = "notifications"
    METRICS = "metrics"
    PROMOTIONS = "promotions"
    APPLICATIONSETS = "applicationsets"
    MULTICLUSTER_ROLLOUTS = "multicluster-rollouts"


ALL_LOOPS: frozenset[Loop] = frozenset(Loop)

#: The step controllers each loop registers with the manager, by the names they log under.
CONTROLLER_NAMES: Mapping[Loop, tuple[str, ...]] = {
    Loop.ROLLOUTS: ("rollouts", "experiments"),
    Loop.ANALYSIS: ("analysisruns",),
    Loop.APPLICATIONS: ("applications", "application-sources"),
    Loop.GIT_CONVERGENCE: ("git-convergence", "rollback-outbox"),
    Loop.NOTIFICATIONS: ("notifications-apps", "notifications-events"),
    Loop.METRICS: (
        "metrics-applications",
        "metrics-rollouts",
        "metrics-analysisruns",
        "metrics-applicationsets",
        "metrics-promotions",
    ),
    Loop.PROMOTIONS: ("promotions",),
    Loop.APPLICATIONSETS: ("applicationsets",),
    Loop.MULTICLUSTER_ROLLOUTS: ("multicluster-rollouts",),
}


def controller_names(loops: frozenset[Loop] = ALL_LOOPS) -> tuple[str, ...]:
    """The names of the controllers an engine running `loops` registers, in start order."""
    return tuple(name for loop in Loop if loop in loops for name in CONTROLLER_NAMES[loop])


@dataclass(frozen=True)
class EngineSettings:
    """How an engine is built.

    `state_dir` holds the shared Git cache (`git-cache/`) and the local runtime's
    `runtime.json` (the default address of `headway.dev/traffic` metrics). `apps` is a file or
    directory of Application/AppProject manifests published at start. `app_poll_seconds` is the
    Git polling interval (Argo CD's 3 minutes). `metrics_port` serves the metrics of
    every loop on `/metrics` at `metrics_address` (127.0.0.1 unless a Pod must be scraped:
0.0.0.0), 0: off; started with the Application loop.
    `health_scripts` is a directory of Lua health overrides (`<group>/<Kind>/health.lua`).
    `app_namespaces` are patterns of the namespaces besides `argocd` whose Applications are
    served. `resync_seconds` is how often every known object is looked at again without a
    change. `state_dir` also keeps the notifications' memory (`notifications.json`).
    `shards` > 1 runs the Application loop as shard `shard` of that many replicas: it
    reconciles only the Applications whose destination cluster that shard owns
    (controllers/sharding.py, Argo CD's application controller sharding).
    `plugins_dir` holds the config management plugins (`<name>/plugin.yaml`; default
    `<state_dir>/plugins`), each run with `plugin_timeout_seconds` for init and generate.
    `forge_policy` says where the ApplicationSet pullRequest and scmProvider generators may
    send a forge token (default: only the public GitHub and GitLab APIs, only from Secrets
    labelled `argocd.argoproj.io/secret-type: scm-creds`; docs/applicationset.md).
    `chart_cache_max_bytes` bounds `<state_dir>/chart-cache`: past it, the least recently used
    charts go, never a version an Application renders, synced or keeps in its history.
    """

    state_dir: Path = Path(".headway")
    loops: frozenset[Loop] = ALL_LOOPS
    apps: Path | None = None
    app_poll_seconds: float = DEFAULT_POLL_SECONDS
    metrics_port: int = 0
    metrics_address: str = "127.0.0.1"
    health_scripts: Path | None = None
    app_namespaces: tuple[str, ...] = ()
    resync_seconds: float = 30.0
    shard: int = 0
    shards: int = 1
    plugins_dir: Path | None = None
    plugin_timeout_seconds: float = DEFAULT_PLUGIN_TIMEOUT_SECONDS
    forge_policy: ForgePolicy = field(default_factory=ForgePolicy)
    chart_cache_max_bytes: int = DEFAULT_CHART_CACHE_BYTES

    @property
    def plugins_directory(self) -> Path:
        return self.plugins_dir if self.plugins_dir is not None else self.state_dir / "plugins"

    def __post_init__(self) -> None:
        if self.shards < 1 or not 0 <= self.shard < self.shards:
            raise ValueError(f"shard must be one of 0..shards-1 (shards >= 1), not shard "
                             f"{self.shard} of {self.shards}")
        if self.plugin_timeout_seconds <= 0:
            message = f"plugin_timeout_seconds must be positive, not {self.plugin_timeout_seconds}"
            raise ValueError(message)
        if self.chart_cache_max_bytes < 0:
            message = f"chart_cache_max_bytes must be >= 0, not {self.chart_cache_max_bytes}"
            raise ValueError(message)
        if self.app_poll_seconds <= 0:
            raise ValueError(f"app_poll_seconds must be positive, not {self.app_poll_seconds}")
        if self.resync_seconds <= 0:
            raise ValueError(f"resync_seconds must be positive, not {self.resync_seconds}")
        if not 0 <= self.metrics_port <= 65535:
            raise ValueError(f"metrics_port must be 0..65535, not {self.metrics_port}")
        unknown = [loop for loop in self.loops if not isinstance(loop, Loop)]
        if unknown:
            raise ValueError(f"loops must be headway.engine.Loop members, not {unknown!r}")
