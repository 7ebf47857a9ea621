"""The CLI's table of contents: every top-level command, the module that adds it, and its
one-line summary.

The table lets `headway --help` list every command, and `headway X` import only the module
behind `X`: importing every command's module costs over a second (controllers, the local
runtime, Git, the condition language), which a call like `headway --help` or `headway get`
should not pay. `tests/test_cli_main.py` checks that the table matches what the modules
register, summaries included, so it cannot drift.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class CommandEntry:
    """A top-level command: its name, the module whose `register(app)` adds it, its summary."""

    name: str
    module: str
    summary: str


COMMANDS: tuple[CommandEntry, ...] = (
    CommandEntry(
        "validate",
        "headway.cli.validate",
        "Check Argo CD / Argo Rollouts manifests: types, required fields, durations, enums, "
        "Argo's rules, and what Headway does not run yet.",
    ),
    CommandEntry(
        "runtime",
        "headway.cli.runtime",
        "The local runtime: Pods as processes, Services as local ports.",
    ),
    CommandEntry(
        "get",
        "headway.cli.objects",
        "List objects of a kind (of one namespace, or every one with -A), or show one.",
    ),
    CommandEntry(
        "describe", "headway.cli.objects", "An object's status, conditions and recent Events."
    ),
    CommandEntry("logs", "headway.cli.objects", "A container's output (stdout and stderr)."),
    CommandEntry(
        "apply",
        "headway.cli.apply",
        "Server-side apply every object in the file(s) (field manager `headway-cli`).",
    ),
    CommandEntry(
        "delete",
        "headway.cli.apply",
        "Delete an object; its dependents go too (background propagation).",
    ),
    CommandEntry(
        "analysis",
        "headway.cli.analysis",
        "Analysis: what a measured result decides (evaluate), and a template run once "
        "against its real providers (run).",
    ),
    CommandEntry(
        "appset",
        "headway.cli.appset",
        "ApplicationSets: the Applications a set generates from this checkout (generate).",
    ),
    CommandEntry(
        "check",
        "headway.cli.check",
        "Check a GitOps repository for the traps that cause outages, with no cluster.",
    ),
    CommandEntry(
        "diff",
        "headway.cli.diff",
        "Render every Application a change affects at both revisions and show the difference.",
    ),
    CommandEntry(
        "explain",
        "headway.cli.explain",
        "The story of an object's last operation, in plain words.",
    ),
    CommandEntry("rollouts", "headway.cli.rollouts", "Watch and steer Rollouts."),
    CommandEntry(
        "drill",
        "headway.cli.drill",
        "Replay a rollout against simulated traffic: detection, time to abort, bad requests "
        "and false aborts, for your template and for the judge side by side.",
    ),
    CommandEntry(
        "serve",
        "headway.cli.serve",
        "Run every controller (Applications, ApplicationSets, Rollouts, analysis, promotions, "
        "multi-cluster rollouts, Git convergence; the dashboard with --ui-port) until SIGTERM "
        "or Ctrl-C.",
    ),
    CommandEntry(
        "app",
        "headway.cli.app",
        "Argo CD Applications: status, diff, operations, and create, set, delete and wait "
        "as `argocd app` does.",
    ),
    CommandEntry(
        "cluster",
        "headway.cli.clusters",
        "Destination clusters, registered as Argo CD cluster Secrets in namespace argocd of the "
        "cluster Headway runs against (the local runtime, or --kubeconfig/--context).",
    ),
    CommandEntry(
        "promote",
        "headway.cli.promote",
        "Promote an image into one environment of a pipeline (a commit, behind its gates).",
    ),
    CommandEntry(
        "approve",
        "headway.cli.promote",
        "Approve a promotion waiting at its gate (not your own change; you must be listed).",
    ),
    CommandEntry("deny", "headway.cli.promote", "Deny a promotion waiting at its gate."),
    CommandEntry("promotions", "headway.cli.promote", "List, show and follow promotions."),
    CommandEntry(
        "demo",
        "headway.cli.demo",
        "Run the demo: deploy v1, a good v2 canary, a bad v3 aborted and reverted in Git.",
    ),
)

BY_NAME: dict[str, CommandEntry] = {entry.name: entry for entry in COMMANDS}


def module_of(entry: CommandEntry) -> ModuleType:
    return importlib.import_module(entry.module)


def modules() -> list[ModuleType]:
    """Every command module once, in table order (for registering everything eagerly)."""
    names = list(dict.fromkeys(entry.module for entry in COMMANDS))
    return [importlib.import_module(name) for name in names]
