"""`headway analysis run`: one AnalysisRun from a template, against the real providers, now.

    headway analysis run TEMPLATE.yaml [--template NAME] --arg service=web --arg hash=abc \\
        [--count 3] [--interval 5s]

For users debugging a template: it builds an AnalysisRun from the template and the `--arg`
values, executes it with the same controller `headway serve` runs (in a temporary local
store), and prints each measurement as it completes (value, phase, why), then the run's
phase. Exit status: 0 when the run is Successful, 1 otherwise, 2 for bad usage. A metric with
an `interval` but no `count` would run until terminated; here it takes `--count`
measurements (1 when not given).

With `--state-dir` the run goes into the store of a running local runtime instead, so job
metrics run real Jobs and `headway.dev/traffic` metrics without an address read the runtime's
metrics endpoint; the run (and its Jobs) is deleted afterwards. Without it, job metrics are
refused.
"""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from headway.state_dir import RuntimePaths, read_runtime_info

if TYPE_CHECKING:
    from headway.clock import Clock
    from headway.model.obj import Obj
    from headway.model.yamlload import Document

# The YAML reader, asyncio, the model, the store, the analysis controller and the HTTP client
# load when a run starts, not for --help.

__all__ = ["run_command"]

EXIT_SUCCESSFUL, EXIT_NOT_SUCCESSFUL, EXIT_USAGE = 0, 1, 2
TEMPLATE_KINDS = ("AnalysisTemplate", "ClusterAnalysisTemplate")
NAMESPACE = "default"


def _usage(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def _template(path: Path, name: str | None) -> Document:
    from headway.model.diagnostics import Severity
    from headway.model.yamlload import load_documents

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise _usage(f"cannot read {path}: {err}") from None
    loaded = load_documents(text, str(path))
    if loaded.diagnostics:
        raise _usage("\n".join(str(d) for d in loaded.diagnostics))
    found = [
        d for d in loaded.documents if d.kind in TEMPLATE_KINDS and (name is None or d.name == name)
    ]
    if len(found) != 1:
        names = ", ".join(d.name for d in loaded.documents if d.kind in TEMPLATE_KINDS) or "none"
        wanted = f"named {name!r} " if name else ""
        problem = "several templates; choose one with --template NAME" if found else "no template"
        raise _usage(f"{path}: {problem} {wanted}(templates: {names})")
    from headway.model.analysis import parse_analysis_template

    template, diagnostics = parse_analysis_template(found[0])
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if template is None or errors:
        raise _usage("\n".join(str(d) for d in errors))
    if template.spec.templates:
        raise _usage(f"{path}: templates that include other templates are not supported here")
    return found[0]


def _args(template: Obj, given: Sequence[str]) -> list[dict[str, Any]]:
    values: dict[str, str] = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise _usage(f"--arg {item!r} is not NAME=VALUE")
        values[key] = value
    args = []
    for arg in template.get("spec", {}).get("args") or []:
        name = arg["name"]
        if name in values:
            args.append({"name": name, "value": values.pop(name)})
        elif arg.get("value") is not None:
            args.append({"name": name, "value": str(arg["value"])})
        else:
            raise _usage(f"argument {name!r} has no value; pass --arg {name}=VALUE")
    if values:
        raise _usage(f"the template has no argument(s) {', '.join(sorted(values))}")
    return args


def _metrics(
    template: Obj, count: int | None, interval: str | None, *, jobs: bool
) -> list[dict[str, Any]]:
    metrics = copy.deepcopy(template["spec"].get("metrics") or [])
    for metric in metrics:
        if "job" in (metric.get("provider") or {}) and not jobs:
            raise _usage(
                f"metric {metric['name']!r} is a job metric: pass --state-dir of a running "
                "local runtime to run its Job"
            )
        if interval:
            metric["interval"] = interval
        if count is not None:
            metric["count"] = count
        elif metric.get("interval") and not metric.get("count"):
            metric["count"] = 1
            typer.echo(f"note: metric {metric['name']} has no count; taking 1 measurement")
        if int(metric.get("count") or 1) > 1 and not metric.get("interval"):
            raise _usage(f"metric {metric['name']!r}: --count above 1 needs --interval")
    return metrics


def build_run(
    template: Document,
    args: Sequence[str],
    *,
    count: int | None,
    interval: str | None,
    jobs: bool = False,
) -> Obj:
    """The AnalysisRun `headway analysis run` executes."""
    from uuid import uuid4

    from headway.controllers.analysis.controller import API_VERSION, KIND

    spec = template.obj["spec"]
    run_spec: dict[str, Any] = {
        "metrics": _metrics(template.obj, count, interval, jobs=jobs),
        "args": _args(template.obj, args),
    }
    for field in ("dryRun", "measurementRetention"):
        if spec.get(field):
            run_spec[field] = copy.deepcopy(spec[field])
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": f"{template.name}-cli-{uuid4().hex[:6]}", "namespace": NAMESPACE},
        "spec": run_spec,
    }


def _report_new(status: Obj, shown: set[tuple[str, str]]) -> None:
    for result in status.get("metricResults") or []:
        for measurement in result.get("measurements") or []:
            key = (result["name"], measurement["startedAt"])
            if key in shown or "finishedAt" not in measurement:
                continue
            shown.add(key)
            reason = str(measurement.get("message", "")).removeprefix(
                f'metric "{result["name"]}": '
            )
            typer.echo(
                f"{measurement['finishedAt']}  {result['name']}: "
                f"value {measurement.get('value', '(none)')} -> {measurement['phase']}: {reason}"
            )


async def execute(
    run: Obj, clock: Clock, store: Path, *, traffic_address: str | None = None
) -> Obj:
    """Step the run to its end with the real providers; returns the final status."""
    import httpx2

    from headway.cluster.errors import ClusterError
    from headway.cluster.local import LocalCluster
    from headway.controllers.analysis.controller import API_VERSION, KIND, AnalysisController
    from headway.providers.registry import default_registry

    shown: set[tuple[str, str]] = set()
    name = run["metadata"]["name"]
    with LocalCluster(store, clock) as cluster:
        cluster.create(run)
        try:
            async with httpx2.AsyncClient() as client:
                registry = default_registry(client, clock, traffic_address=traffic_address)
                controller = AnalysisController(providers=registry, clock=clock)
                while True:
                    wait = await controller.step(cluster, NAMESPACE, name, clock.now())
                    status = cluster.get(API_VERSION, KIND, name, NAMESPACE).get("status") or {}
                    _report_new(status, shown)
                    if wait is None:
                        return dict(status)
                    await clock.sleep(wait)
        finally:
            with contextlib.suppress(ClusterError):
                cluster.delete(API_VERSION, KIND, name, NAMESPACE)


def _running_runtime(state_dir: Path) -> tuple[Path, str | None]:
    """The store of the runtime running in `state_dir`, and its metrics address."""
    paths = RuntimePaths(state_dir)
    info = read_runtime_info(paths)
    pid = info.get("pid")
    alive = isinstance(pid, int) and paths.db.exists()
    if alive:
        try:
            os.kill(int(str(pid)), 0)
        except OSError:
            alive = False
    if not alive:
        raise _usage(f"no local runtime is running in {state_dir} (start it: headway runtime up)")
    address = info.get("metricsAddress")
    return paths.db, str(address) if address else None


@contextlib.contextmanager
def _store(state_dir: Path | None) -> Iterator[tuple[Path, str | None]]:
    if state_dir is not None:
        yield _running_runtime(state_dir)
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="headway-analysis-") as work_dir:
        yield Path(work_dir) / "analysis.db", None


def run_command(
    template: Annotated[Path, typer.Argument(help="AnalysisTemplate YAML.")],
    *,
    args: Annotated[
        list[str] | None, typer.Option("--arg", help="NAME=VALUE for a template argument.")
    ] = None,
    template_name: Annotated[
        str | None, typer.Option("--template", help="The template's metadata.name.")
    ] = None,
    count: Annotated[
        int | None, typer.Option("--count", min=1, help="Measurements per metric.")
    ] = None,
    interval: Annotated[
        str | None, typer.Option("--interval", help="Time between measurements, e.g. 5s.")
    ] = None,
    state_dir: Annotated[
        Path | None,
        typer.Option("--state-dir", help="Run in this running local runtime (for job metrics)."),
    ] = None,
) -> None:
    """Run a template once against its real metric providers, printing each measurement."""
    import asyncio

    from headway.clock import SystemClock

    document = _template(template, template_name)
    run = build_run(
        document, args or [], count=count, interval=interval, jobs=state_dir is not None
    )
    with _store(state_dir) as (store, traffic_address):
        status = asyncio.run(execute(run, SystemClock(), store, traffic_address=traffic_address))
    phase = status.get("phase", "?")
    message = status.get("message", "")
    typer.echo(f"run {phase}" + (f": {message}" if message else ""))
    raise typer.Exit(EXIT_SUCCESSFUL if phase == "Successful" else EXIT_NOT_SUCCESSFUL)
