"""The ApplicationSet controller: a step-function loop over `argoproj.io/v1alpha1
ApplicationSet`s of the control namespace (`argocd`).

One step for a set:

    read the set -> read its inputs (Git trees, cluster Secrets: `inputs`)
    -> generate (`headway.appset.generate`, pure) -> admit each Application against its
    AppProject (`headway.appset.admission`) -> decide (`headway.appset.plan`, pure)
    -> create / update / delete Applications -> write the set's status once

A generation error writes only the status: no Application is created, changed or deleted
(docs/applicationset.md, docs/reliability.md). The set is looked at again when it changes,
when an Application it owns changes (RollingSync follows their sync and health), when a
cluster Secret changes, and every Git poll interval.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import httpx2

from headway.appset import rolling_sync as rolling
from headway.appset.admission import refusals
from headway.appset.forge_policy import ForgePolicy
from headway.appset.generate import RESOURCES_FINALIZER, Generation, generate
from headway.appset.inputs import InputError
from headway.appset.ownership import taken_back
from headway.appset.plan import Plan, decide, with_write_error
from headway.clock import Clock
from headway.cluster.errors import ClusterError, Conflict, NotFound
from headway.cluster.events import record_event
from headway.cluster.protocol import Cluster
from headway.controllers.app.project import load_project
from headway.controllers.appset.inputs import FetchTimes, StepInputs
from headway.controllers.appset.tls_clients import TlsClients
from headway.controllers.manager import ObjectKey
from headway.gitlab_rest import tls_context
from headway.model.appproject import AppProject
from headway.model.obj import Obj
from headway.source.git import GitCache

__all__ = ["ARGO_API", "FIELD_MANAGER", "ApplicationSetController"]

log = logging.getLogger(__name__)

ARGO_API = "argoproj.io/v1alpha1"
FIELD_MANAGER = "applicationset-controller"
REFRESH_ANNOTATION = "argocd.argoproj.io/application-set-refresh"
REVERSE_DELETION_POLL = 10.0  # seconds between looks while deleting in reverse (Argo's)
FORGE_TIMEOUT = 10.0  # seconds a forge or plugin call may take before the step gives up


class ApplicationSetController:
    """Step controller for ApplicationSets (the manager's `StepController`)."""

    name = "applicationsets"
    watches: Sequence[tuple[str, str]] = (
        (ARGO_API, "ApplicationSet"),
        (ARGO_API, "Application"),
        ("v1", "Secret"),
    )

    def __init__(
        self,
        *,
        cluster: Cluster,
        clock: Clock,
        git: GitCache,
        namespace: str,
        poll_seconds: float,
        http: httpx2.Client | None = None,
        forge_policy: ForgePolicy | None = None,
    ) -> None:
        self._cluster = cluster
        self._forge_policy = forge_policy or ForgePolicy()
        self._http = http
        self._tls_clients = TlsClients(self._new_tls_client)
        self._clock = clock
        self._git = git
        self._namespace = namespace
        self._poll = poll_seconds
        self._fetched = FetchTimes()

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        meta = obj.get("metadata") or {}
        kind = obj.get("kind")
        if kind == "ApplicationSet":
            return [ObjectKey(str(meta.get("namespace") or self._namespace), str(meta.get("name")))]
        if kind == "Application":
            return [
                ObjectKey(str(meta.get("namespace") or ""), str(ref.get("name")))
                for ref in meta.get("ownerReferences") or []
                if ref.get("kind") == "ApplicationSet"
            ]
        labels = meta.get("labels") or {}
        if kind == "Secret" and labels.get("argocd.argoproj.io/secret-type") == "cluster":
            return [ObjectKey(self._namespace, str(s["metadata"]["name"])) for s in self._sets()]
        return []

    def _sets(self) -> list[Obj]:
        try:
            return self._cluster.list(ARGO_API, "ApplicationSet", namespace=self._namespace)
        except ClusterError:
            return []

    def step(self, key: ObjectKey) -> float | None:
        if key.namespace != self._namespace:
            return None  # ApplicationSets are served from the control namespace only
        try:
            appset = self._cluster.get(ARGO_API, "ApplicationSet", key.name, key.namespace)
        except NotFound:
            return None
        if (appset.get("metadata") or {}).get("deletionTimestamp"):
            return self._finish_deletion(appset)
        if rolling.deletes_in_reverse(appset.get("spec") or {}) and not _has_finalizer(appset):
            self._set_finalizer(appset, present=True)
            return 0.0  # the watch brings the set back with the finalizer
        refresh = REFRESH_ANNOTATION in ((appset.get("metadata") or {}).get("annotations") or {})
        inputs = StepInputs(
            cluster=self._cluster,
            namespace=self._namespace,
            git=self._git,
            clock=self._clock,
            fetched=FetchTimes() if refresh else self._fetched,  # refresh: fetch every repository
            poll_seconds=self._poll,
            http=self._http_client,
            forge_policy=self._forge_policy,
            tls_http=self._tls_client,
        )
        generation = generate(appset, inputs)
        self._fetched.last.update(inputs.fetched.last)
        apps = self._cluster.list(ARGO_API, "Application", namespace=self._namespace)
        invalid: dict[str, str] = {}
        if generation.error is None:
            invalid = {**self._refusals(generation, inputs), **_foreign(appset, generation, apps)}
        owned = _owned(appset, generation, apps)
        plan = decide(appset, generation, owned, invalid=invalid, now=self._clock.now())
        self._execute(appset, plan)
        if refresh and generation.error is None:
            self._clear_refresh(appset)
        return min(self._poll, generation.requeue_after or self._poll)

    def _http_client(self) -> httpx2.Client:
        """The client forge calls go through, made on first use."""
        if self._http is None:
            self._http = httpx2.Client(timeout=FORGE_TIMEOUT)
        return self._http

    def _tls_client(self, insecure: bool, ca_pem: str) -> httpx2.Client:
        """A client for a forge's `insecure` / `caRef` (PEM certificates trusted besides the
        system's), one per distinct setting (a bounded few kept)."""
        return self._tls_clients.get(insecure, ca_pem)

    def _new_tls_client(self, insecure: bool, ca_pem: str) -> httpx2.Client:
        """The shared client's timeout, with that setting's certificate check."""
        timeout = self._http_client().timeout
        return httpx2.Client(timeout=timeout, verify=tls_context(insecure, ca_pem))

    def _clear_refresh(self, appset: Obj) -> None:
        """Drop the refresh annotation once the set was generated with freshly fetched Git
        (as Argo CD does; on an error it stays, and every step fetches again)."""
        try:
            live = self._cluster.get(
                ARGO_API, "ApplicationSet", appset["metadata"]["name"], self._namespace
            )
        except NotFound:
            return
        meta = dict(live["metadata"])
        meta["annotations"] = {
            k: v for k, v in (meta.get("annotations") or {}).items() if k != REFRESH_ANNOTATION
        }
        try:
            self._cluster.update({**live, "metadata": meta}, field_manager=FIELD_MANAGER)
        except Conflict:
            return

    def _finish_deletion(self, appset: Obj) -> float | None:
        """A deleted set with `deletionOrder: Reverse` removes its Applications one at a
        time, the last step first, waiting for each to be gone; then it lets go of its
        finalizer (garbage collection takes what is left, as without the finalizer)."""
        if not _has_finalizer(appset):
            return None
        apps = self._cluster.list(ARGO_API, "Application", namespace=self._namespace)
        uid = str(appset["metadata"].get("uid"))
        owned = {a["metadata"]["name"]: a for a in apps if _controller_uid(a) == uid}
        spec = appset.get("spec") or {}
        if rolling.deletes_in_reverse(spec):
            labels = {n: dict(a["metadata"].get("labels") or {}) for n, a in owned.items()}
            order = rolling.reverse_deletion_order(spec, labels)
            steps = rolling.app_steps(spec, labels).step_of
            for name in (n for n in order if n in steps):
                if owned[name]["metadata"].get("deletionTimestamp"):
                    return REVERSE_DELETION_POLL  # the previous one is still going
                self._cluster.delete(ARGO_API, "Application", name, self._namespace)
                self._event(appset, "Deleted", f'Deleted Application "{name}" (reverse order)')
                return REVERSE_DELETION_POLL
        self._set_finalizer(appset, present=False)
        return None

    def _set_finalizer(self, appset: Obj, *, present: bool) -> None:
        meta = dict(appset["metadata"])
        others = [f for f in meta.get("finalizers") or [] if f != RESOURCES_FINALIZER]
        meta["finalizers"] = [*others, RESOURCES_FINALIZER] if present else others
        try:
            self._cluster.update({**appset, "metadata": meta}, field_manager=FIELD_MANAGER)
        except (Conflict, NotFound):
            return

    def _refusals(self, generation: Generation, inputs: StepInputs) -> dict[str, str]:
        names = {str((a.manifest.get("spec") or {}).get("project") or "") for a in generation.apps}
        projects: dict[str, AppProject | None] = {}
        for name in names:
            try:
                projects[name] = load_project(self._cluster, name, self._namespace)
            except ValueError:
                projects[name] = None
        try:
            clusters = inputs.clusters()
        except InputError as err:
            return {a.name: str(err) for a in generation.apps}
        return refusals(generation.apps, projects=projects, clusters=clusters)

    def _execute(self, appset: Obj, plan: Plan) -> None:
        """The plan's writes, then the status; a write the store refuses is reported in the
        status (Argo's Create/Update/DeleteApplicationError) and the others still happen."""
        name = str(appset["metadata"]["name"])
        failures: list[tuple[str, str]] = []
        for manifest in plan.creates:
            failures.extend(self._write(appset, manifest, create=True))
        for manifest in plan.updates:
            self._warn_taken_back(appset, manifest)
            failures.extend(self._write(appset, manifest, create=False))
        for app_name in plan.deletes:
            try:
                self._cluster.delete(ARGO_API, "Application", app_name, self._namespace)
                self._event(appset, "Deleted", f'Deleted Application "{app_name}"')
            except NotFound:
                pass
            except ClusterError as err:
                failures.append(("DeleteApplicationError", f"Application {app_name}: {err}"))
        status = plan.status
        if failures:
            reason, message = failures[0]
            more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
            status = with_write_error(status, reason, message + more, now=self._clock.now())
        self._write_status(appset, status, name)

    def _warn_taken_back(self, appset: Obj, manifest: Mapping[str, Any]) -> None:
        """A Warning Event on the set for each field the update takes back from another
        writer (Argo CD reverts them silently)."""
        name = str(manifest["metadata"]["name"])
        try:
            live = self._cluster.get(ARGO_API, "Application", name, self._namespace)
        except NotFound:
            return
        for field in taken_back(live, manifest, manager=FIELD_MANAGER):
            message = (
                f"Application {name}: {field.field} written by {field.writer} is set back to "
                "the generated value; list it in ignoreApplicationDifferences to keep it"
            )
            self._event(appset, "FieldTakenBack", message, warning=True)

    def _write(
        self, appset: Obj, manifest: Mapping[str, Any], *, create: bool
    ) -> list[tuple[str, str]]:
        app_name = str(manifest["metadata"]["name"])
        try:
            if create:
                self._cluster.apply(dict(manifest), field_manager=FIELD_MANAGER)
            else:
                self._cluster.update(dict(manifest), field_manager=FIELD_MANAGER)
        except Conflict:
            return []  # changed under us: the watch brings the set back with the new version
        except ClusterError as err:
            reason = "CreateApplicationError" if create else "UpdateApplicationError"
            return [(reason, f"Application {app_name}: {err}")]
        action = "created" if create else "updated"
        self._event(appset, action, f'{action} Application "{app_name}"')
        return []

    def _write_status(self, appset: Obj, status: Obj, name: str) -> None:
        if status == appset.get("status"):
            return
        try:
            self._cluster.patch_status(ARGO_API, "ApplicationSet", name, self._namespace, status)
        except (NotFound, Conflict):
            return

    def _event(self, appset: Obj, reason: str, message: str, *, warning: bool = False) -> None:
        try:
            record_event(
                self._cluster,
                self._clock,
                involved=appset,
                reason=reason,
                message=message,
                event_type="Warning" if warning else "Normal",
                component=FIELD_MANAGER,
            )
        except ClusterError as err:
            log.warning(
                "applicationset %s: event not recorded: %s", appset["metadata"]["name"], err
            )


def _has_finalizer(appset: Obj) -> bool:
    return RESOURCES_FINALIZER in ((appset.get("metadata") or {}).get("finalizers") or [])


def _controller_uid(app: Obj) -> str | None:
    refs = (app.get("metadata") or {}).get("ownerReferences") or []
    return next((str(r.get("uid")) for r in refs if r.get("controller")), None)


def _owned(appset: Obj, generation: Generation, apps: list[Obj]) -> list[Obj]:
    """The Applications this set controls, and the unowned ones it generates (adopted, as
    Argo CD does)."""
    uid = str((appset.get("metadata") or {}).get("uid"))
    names = generation.names
    return [
        app
        for app in apps
        if _controller_uid(app) == uid
        or (_controller_uid(app) is None and app["metadata"]["name"] in names)
    ]


def _foreign(appset: Obj, generation: Generation, apps: list[Obj]) -> dict[str, str]:
    """Generated names already taken by an Application another controller owns: refused,
    never taken over."""
    uid = str((appset.get("metadata") or {}).get("uid"))
    out: dict[str, str] = {}
    for app in apps:
        name = app["metadata"]["name"]
        owner = _controller_uid(app)
        if name in generation.names and owner is not None and owner != uid:
            refs = app["metadata"].get("ownerReferences") or []
            ref = next(r for r in refs if r.get("controller"))
            out[name] = (
                f"application {name}: already exists and is controlled by "
                f"{ref.get('kind')}/{ref.get('name')}; it is left alone"
            )
    return out
