"""`headway get`, `headway describe` and `headway logs` against the local runtime's store."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from headway.cli.targets import Context, Kubeconfig, Target, open_target
from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster, ResourceKind
from headway.kube.pod_columns import pod_ready_text, pod_restarts, pod_status_text
from headway.kubetime import parse_time
from headway.model.obj import Obj
from headway.redaction import redact_url_credentials, redact_urls_in
from headway.state_dir import RuntimePaths, container_log_path

StateDir = Annotated[Path, typer.Option("--state-dir", help="Runtime state directory.")]
Namespace = Annotated[
    str, typer.Option("-n", "--namespace", help="Namespace (ignored for cluster-scoped kinds).")
]
DEFAULT_STATE = Path(".headway")
OUTPUT_FORMATS = ("", "yaml", "json", "wide")


def resolve_kind(cluster: Cluster, name: str) -> ResourceKind:
    """A kind by name, plural or short name, case-insensitive."""
    from headway.cluster.local.api.kinds import SHORT_NAMES  # the kind table's kubectl names

    plurals = {short: plural for plural, shorts in SHORT_NAMES.items() for short in shorts}
    kinds = cluster.discovery()
    found = _kind_named(kinds, plurals.get(name.lower(), name.lower()))
    if found is None:  # not a built-in name: the short names CRDs declare
        crd_names = _crd_short_names(cluster)
        found = _kind_named(kinds, crd_names.get(name.lower(), name.lower()))
    if found is not None:
        return found
    typer.echo(f'error: the server doesn\'t have a resource type "{name}"', err=True)
    raise typer.Exit(1)


def _kind_named(kinds: list[ResourceKind], wanted: str) -> ResourceKind | None:
    for kind in kinds:
        if wanted in (kind.kind.lower(), kind.plural, kind.plural.rstrip("s")):
            return kind
    return None


def _crd_short_names(cluster: Cluster) -> dict[str, str]:
    """Short name -> plural, from each CustomResourceDefinition's `spec.names.shortNames`."""
    try:
        crds = cluster.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    except ClusterError:
        return {}
    found = {}
    for crd in crds:
        names = (crd.get("spec") or {}).get("names") or {}
        for short in names.get("shortNames") or ():
            found[str(short).lower()] = str(names.get("plural") or "")
    return found


def _age(obj: Obj, stamp: str | None = None) -> str:
    created = parse_time(stamp or obj["metadata"].get("creationTimestamp"))
    if created is None:
        return "<unknown>"
    seconds = int((datetime.now(UTC) - created).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _field(obj: Obj, part: str, key: str, default: int) -> str:
    return str((obj.get(part) or {}).get(key, default))


def _pod_columns(p: Obj) -> list[str]:
    return [pod_ready_text(p), pod_status_text(p), str(pod_restarts(p))]


def _appset_columns(appset: Obj) -> list[str]:
    """How many Applications the set manages, and its ErrorOccurred / RolloutProgressing."""
    status = appset.get("status") or {}
    conditions = {c.get("type"): c for c in status.get("conditions") or []}
    error = conditions.get("ErrorOccurred") or {}
    rollout = conditions.get("RolloutProgressing") or {}
    if error.get("status") == "True":
        return [str(len(status.get("resources") or [])), "Error", str(error.get("message") or "")]
    if rollout.get("status") == "True":
        return [str(len(status.get("resources") or [])), "Progressing", str(rollout.get("message"))]
    up_to_date = (conditions.get("ResourcesUpToDate") or {}).get("status") == "True"
    state = "Healthy" if up_to_date else "Unknown"
    return [str(len(status.get("resources") or [])), state, ""]


COLUMNS: dict[str, tuple[list[str], Callable[[Obj], list[str]]]] = {
    "Pod": (["READY", "STATUS", "RESTARTS"], _pod_columns),
    "Deployment": (
        ["READY", "UP-TO-DATE", "AVAILABLE"],
        lambda d: [
            f"{_field(d, 'status', 'readyReplicas', 0)}/{_field(d, 'spec', 'replicas', 1)}",
            str((d.get("status") or {}).get("updatedReplicas", 0)),
            str((d.get("status") or {}).get("availableReplicas", 0)),
        ],
    ),
    "ReplicaSet": (
        ["DESIRED", "CURRENT", "READY"],
        lambda r: [
            str((r.get("spec") or {}).get("replicas", 1)),
            str((r.get("status") or {}).get("replicas", 0)),
            str((r.get("status") or {}).get("readyReplicas", 0)),
        ],
    ),
    "Job": (
        ["COMPLETIONS", "ACTIVE"],
        lambda j: [
            f"{_field(j, 'status', 'succeeded', 0)}/{_field(j, 'spec', 'completions', 1)}",
            str((j.get("status") or {}).get("active", 0)),
        ],
    ),
    "VirtualService": (
        ["ROUTER", "ADDRESS", "WEIGHTS"],
        lambda v: [
            str((v.get("status") or {}).get("router") or "-"),
            str((v["metadata"].get("annotations") or {}).get("headway.dev/address") or "<pending>"),
            ",".join(
                f"{d.get('service')}={d.get('weight')}"
                for d in (v.get("status") or {}).get("destinations") or []
            )
            or "-",
        ],
    ),
    "Service": (
        ["ADDRESS", "PORTS"],
        lambda s: [
            ",".join(f"127.0.0.1:{p}" for p in _service_ports(s)) or "<pending>",
            ",".join(str(p.get("port")) for p in (s.get("spec") or {}).get("ports") or []),
        ],
    ),
    "Endpoints": (["ENDPOINTS"], lambda e: [_endpoint_list(e)]),
    "StatefulSet": (
        ["READY"],
        lambda s: [f"{_field(s, 'status', 'readyReplicas', 0)}/{_field(s, 'spec', 'replicas', 1)}"],
    ),
    "DaemonSet": (
        ["DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE"],
        lambda d: [_field(d, "status", key, 0) for key in (
            "desiredNumberScheduled", "currentNumberScheduled", "numberReady",
            "updatedNumberScheduled", "numberAvailable")],
    ),
    "PersistentVolumeClaim": (
        ["STATUS", "VOLUME", "CAPACITY"],
        lambda c: [
            str((c.get("status") or {}).get("phase") or "Pending"),
            str((c.get("spec") or {}).get("volumeName") or ""),
            str(((c.get("status") or {}).get("capacity") or {}).get("storage") or ""),
        ],
    ),
    "PersistentVolume": (
        ["CAPACITY", "RECLAIM POLICY", "STATUS", "CLAIM"],
        lambda v: [
            str(((v.get("spec") or {}).get("capacity") or {}).get("storage") or ""),
            str((v.get("spec") or {}).get("persistentVolumeReclaimPolicy") or "Retain"),
            str((v.get("status") or {}).get("phase") or "Pending"),
            "/".join(str(((v.get("spec") or {}).get("claimRef") or {}).get(k) or "")
                     for k in ("namespace", "name")).strip("/"),
        ],
    ),
    "ApplicationSet": (["APPS", "STATUS", "MESSAGE"], _appset_columns),
    "Promotion": (
        ["PIPELINE", "ENV", "IMAGE", "PHASE"],
        lambda p: [
            str((p.get("spec") or {}).get("pipeline") or ""),
            str((p.get("spec") or {}).get("environment") or ""),
            str((p.get("spec") or {}).get("image") or ""),
            str((p.get("status") or {}).get("phase") or "Pending"),
        ],
    ),
}



def _service_ports(service: Obj) -> list[int]:
    from headway.cluster.local.services.proxies import service_ports

    return service_ports(service)


def _endpoint_list(endpoints: Obj) -> str:
    pairs = [
        f"{a.get('ip')}:{p.get('port')}"
        for subset in endpoints.get("subsets") or []
        for a in subset.get("addresses") or []
        for p in subset.get("ports") or []
    ]
    return ",".join(pairs) or "<none>"


def _wide(obj: Obj) -> list[str]:
    if obj.get("kind") == "Pod":
        port = ((obj["metadata"].get("annotations") or {}).get("headway.dev/port")) or "-"
        owners = ",".join(o.get("name", "") for o in obj["metadata"].get("ownerReferences") or [])
        return [f"127.0.0.1:{port}", owners or "-"]
    labels = obj["metadata"].get("labels") or {}
    return [",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "-"]


def _event_rows(events: list[Obj]) -> list[list[str]]:
    """As `kubectl get events`: oldest first by last seen, what it is about, and why."""

    def row(e: Obj) -> list[str]:
        ref = e.get("involvedObject") or {}
        count = int(e.get("count") or 1)
        message = " ".join(str(e.get("message") or "").split())  # one line per Event
        message += f" (x{count})" if count > 1 else ""
        about = f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"
        seen = _age(e, e.get("lastTimestamp"))
        return [seen, str(e.get("type", "")), str(e.get("reason", "")), about, message]

    header = ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    return [header, *map(row, _events_in_order(events))]


def _events_in_order(events: list[Obj]) -> list[Obj]:
    from headway.cluster.events import event_order
    return sorted(events, key=event_order)


def _table(objs: list[Obj], kind: str, *, wide: bool, namespaces: bool) -> None:
    """kubectl's table; with `namespaces` (`-A`) a NAMESPACE column comes first."""
    if kind == "Event":
        rows = _event_rows(objs)
    else:
        headers, columns = COLUMNS.get(kind, ([], lambda o: []))
        extra = (["ADDRESS", "OWNER"] if kind == "Pod" else ["LABELS"]) if wide else []
        rows = [["NAME", *headers, "AGE", *extra]]
        rows += [
            [o["metadata"]["name"], *_cells(columns, o, len(headers)), _age(o)]
            + (_wide(o) if wide else [])
            for o in objs
        ]
    if namespaces:
        ordered = objs if kind != "Event" else _events_in_order(objs)
        rows = [["NAMESPACE", *rows[0]]] + [
            [str(o["metadata"].get("namespace") or ""), *row]
            for o, row in zip(ordered, rows[1:], strict=True)
        ]
    _print_rows(rows)


def _cells(columns: Callable[[Obj], list[str]], obj: Obj, count: int) -> list[str]:
    """One malformed object (`ports: 5`, which the store's loose schema lets in) must not
    hide the others: its cells say so instead."""
    try:
        return columns(obj)
    except (AttributeError, TypeError, ValueError, KeyError):
        return ["<invalid>"] * count


def _print_rows(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        typer.echo("   ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def get(
    kind: Annotated[str, typer.Argument(help="Kind, plural or short name (pods, deploy, svc).")],
    name: Annotated[
        str | None, typer.Argument(help="One object; all of the kind without it.")
    ] = None,
    *,
    namespace: Namespace = "default",
    output: Annotated[str, typer.Option("-o", "--output", help="yaml, json or wide.")] = "",
    all_namespaces: Annotated[
        bool,
        typer.Option("-A", "--all-namespaces", help="List the kind in every namespace."),
    ] = False,
    state_dir: StateDir = DEFAULT_STATE,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """List objects of a kind (of one namespace, or every one with -A), or show one."""
    if all_namespaces and name:
        raise typer.BadParameter("a name cannot be given with -A", param_hint="'-A'")
    if output not in OUTPUT_FORMATS:
        # A typo must not fall back to the table: a script parsing `-o jsno` would read it.
        allowed = ", ".join(f for f in OUTPUT_FORMATS if f)
        raise typer.BadParameter(f"{output!r} is not one of: {allowed}", param_hint="'-o'")
    with open_target(Target(state_dir, kubeconfig, context)) as cluster:
        rk = resolve_kind(cluster, kind)
        ns = namespace if rk.namespaced and not all_namespaces else None
        try:
            objs = (
                [cluster.get(rk.api_version, rk.kind, name, ns)]
                if name
                else cluster.list(rk.api_version, rk.kind, namespace=ns)
            )
        except NotFound:
            typer.echo(f'error: {rk.plural} "{name}" not found', err=True)
            raise typer.Exit(1) from None
    if output in ("yaml", "json"):
        data: Any = objs[0] if name else {"apiVersion": "v1", "kind": "List", "items": objs}
        as_json = output == "json"
        import yaml  # the YAML writer loads when something is shown as YAML

        shown = json.dumps(data, indent=2) if as_json else yaml.safe_dump(data, sort_keys=False)
        typer.echo(redact_url_credentials(shown))
    elif not objs:
        where = f" in {namespace} namespace" if ns is not None else ""
        typer.echo(f"No resources found{where}.")
    else:
        spread = all_namespaces and rk.namespaced
        if spread:
            objs.sort(key=lambda o: (str(o["metadata"].get("namespace")), o["metadata"]["name"]))
        _table(objs, rk.kind, wide=output == "wide", namespaces=spread)


def describe(
    kind: Annotated[str, typer.Argument(help="Kind, plural or short name (pod, deploy, ro).")],
    name: Annotated[str, typer.Argument(help="The object's name.")],
    *,
    namespace: Namespace = "default",
    state_dir: StateDir = DEFAULT_STATE,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """An object's status, conditions and recent Events."""
    from headway.cluster.events import events_for
    with open_target(Target(state_dir, kubeconfig, context)) as cluster:
        rk = resolve_kind(cluster, kind)
        try:
            obj = cluster.get(rk.api_version, rk.kind, name, namespace if rk.namespaced else None)
        except NotFound:
            typer.echo(f'error: {rk.plural} "{name}" not found', err=True)
            raise typer.Exit(1) from None
        obj = redact_urls_in(obj)
        meta = obj["metadata"]
        for label, value in (
            ("Name", meta["name"]),
            ("Namespace", meta.get("namespace", "")),
            ("Kind", rk.kind),
            ("Labels", _labels(meta.get("labels"))),
            ("Created", meta.get("creationTimestamp")),
        ):
            typer.echo(f"{label + ':':<14}{value}")
        status, conditions = _status_and_conditions(obj.get("status"))
        import yaml

        dumped = yaml.safe_dump(status, sort_keys=False) if status else "{}\n"
        typer.echo("Status:\n" + _indent(dumped))
        typer.echo("Conditions:")
        # Columns fit the longest type and reason (ApplicationSet's run past 16 and 28).
        width = max([16, *(len(str(c.get("type", ""))) + 2 for c in conditions)])
        reason_width = max([28, *(len(str(c.get("reason", ""))) + 2 for c in conditions)])
        for c in conditions:
            cells = (str(c.get("type", "")), str(c.get("status", "")), str(c.get("reason", "")))
            typer.echo(
                f"  {cells[0]:<{width}}{cells[1]:<7}{cells[2]:<{reason_width}}"
                f"{c.get('message', '')}"
            )
        typer.echo("Events:")
        _describe_events(redact_urls_in(events_for(cluster, obj)[-15:]))


def _status_and_conditions(found: object) -> tuple[object, list[Mapping[str, Any]]]:
    """The status to print as YAML and the conditions to print as rows; a status or a
    conditions list of another shape (written through the API) is printed as it is."""
    if not isinstance(found, Mapping):
        return found, []
    status = dict(found)
    conditions = status.get("conditions") or []
    if not isinstance(conditions, list) or not all(isinstance(c, Mapping) for c in conditions):
        return status, []
    status.pop("conditions", None)
    return status, conditions


def _describe_events(recent: list[Obj]) -> None:
    """Oldest first, as `kubectl describe`: type, reason, age (the last time, and the first
    for repeats: `3m (x4 over 10m)`), message; columns fit the longest cell."""
    rows = [["TYPE", "REASON", "AGE", "MESSAGE"]]
    for e in recent:
        age = _age(e, e.get("lastTimestamp"))
        count = int(e.get("count") or 1)
        if count > 1:
            age += f" (x{count} over {_age(e, e.get('firstTimestamp'))})"
        message = " ".join(str(e.get("message") or "").split())
        rows.append([str(e.get("type", "")), str(e.get("reason", "")), age, message])
    if len(rows) == 1:
        typer.echo("  <none>")
        return
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        cells = "  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True))
        typer.echo(f"  {cells}  {row[3]}".rstrip())


def _labels(labels: object) -> str:
    if not isinstance(labels, dict) or not labels:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())


def logs(
    pod: Annotated[str, typer.Argument(help="The Pod's name.")],
    *,
    container: Annotated[
        str | None, typer.Option("-c", "--container", help="Needed when the Pod has several.")
    ] = None,
    previous: Annotated[
        bool, typer.Option("--previous", "-p", help="The previous run's log.")
    ] = False,
    namespace: Namespace = "default",
    state_dir: StateDir = DEFAULT_STATE,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """A container's output (stdout and stderr)."""
    target = Target(state_dir, kubeconfig, context)
    with open_target(target) as cluster:
        try:
            obj = cluster.get("v1", "Pod", pod, namespace)
        except NotFound:
            typer.echo(f'error: pods "{pod}" not found', err=True)
            raise typer.Exit(1) from None
        name = _container(obj, pod, container)
        if target.is_kubernetes:
            typer.echo(_api_log(cluster, pod, namespace, name, previous=previous), nl=False)
            return
    _print_local_log(state_dir, pod, namespace, name, previous=previous)


def _api_log(cluster: Cluster, pod: str, namespace: str, container: str, *,
             previous: bool) -> str:
    from headway.cluster.kube import KubeCluster

    assert isinstance(cluster, KubeCluster)
    try:
        return cluster.pod_log(pod, namespace, container=container, previous=previous)
    except ClusterError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None


def _container(obj: Obj, pod: str, container: str | None) -> str:
    names = [c.get("name") for c in (obj.get("spec") or {}).get("containers") or []]
    name = container or (names[0] if len(names) == 1 else None)
    if name not in names:
        choices = ", ".join(str(n) for n in names)
        problem = (
            f'container "{name}" is not in pod {pod}'
            if container
            else f"a container name must be specified for pod {pod}"
        )
        typer.echo(f"error: {problem}; choose one of: {choices} (-c NAME)", err=True)
        raise typer.Exit(1)
    return str(name)


def _print_local_log(state_dir: Path, pod: str, namespace: str, name: str, *,
                     previous: bool) -> None:
    path = container_log_path(RuntimePaths(state_dir).logs_dir, namespace, pod, str(name))
    if previous:
        path = path.with_name(f"{name}.previous.log")
    if not path.exists():
        typer.echo(
            f'error: no {"previous " if previous else ""}log for container "{name}" in pod "{pod}"',
            err=True,
        )
        raise typer.Exit(1)
    typer.echo(path.read_text(errors="replace"), nl=False)


def register(app: typer.Typer) -> None:
    app.command("get")(get)
    app.command("describe")(describe)
    app.command("logs")(logs)
