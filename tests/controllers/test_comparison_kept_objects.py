"""What a cached comparison keeps alive, and that keeping less changes no result.

Every comparison stays in the comparison cache, so each object it holds is one more for
every full garbage collection to rescan (bench/bench_refresh.py: on a cold refresh of 1,000
apps those collections cost more than the comparisons themselves). A comparison holds the
caller's live keys rather than equal copies, one shared health result per status without a
message, and the desired state holds the rendered objects, not copies of them. Differential:
`compare_app` with and without the caller's keys, and the hook reading against the
annotation-by-annotation reading it short-cuts, on generated objects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
from hypothesis import given, settings
from hypothesis import strategies as st

from headway.clock import VirtualClock
from headway.controllers.app.refresh import ComparisonCache
from headway.controllers.app.sources import DesiredState, SourceReader
from headway.health import HealthResult, HealthStatus, assess, default_registry
from headway.model.application import parse_application
from headway.model.yamlload import Document
from headway.source.git import GitCache
from headway.sync import hooks
from headway.sync.comparison import compare_app, prepare_desired
from headway.sync.resources import ResourceKey, annotation_values, key_of


def _live_copy(desired: dict[str, Any], n: int, *, ready: int = 2) -> dict[str, Any]:
    meta = {**desired["metadata"], "uid": f"uid-{n}", "resourceVersion": str(n)}
    live = {**desired, "metadata": meta}
    if desired["kind"] == "Deployment":
        live["status"] = {
            "observedGeneration": 0,
            "replicas": 2,
            "updatedReplicas": 2,
            "readyReplicas": ready,
            "availableReplicas": ready,
        }
    return live


def _state(objects: tuple[dict[str, Any], ...]) -> DesiredState:
    return DesiredState(objects=objects, revisions=("c0ffee",), fingerprint="tree-1")


def _web(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}}},
    }


def test_a_cached_comparison_holds_the_callers_live_keys_not_copies() -> None:
    desired = _state((_web("a"), _web("b")))
    prepared = prepare_desired(desired.objects, app="shop", namespace="shop")
    live = {key_of(o): _live_copy(o, n) for n, o in enumerate(prepared)}
    result = ComparisonCache().refresh(
        app="shop",
        namespace="shop",
        desired_state=desired,
        rules=(),
        rules_identity="",
        read_live=lambda _desired: live,
        assess=assess,
        clock_kinds=default_registry().reads_clock,
    )
    held = [*result.comparison.live, *result.comparison.diffs]
    held += [r.key for r in result.comparison.resources]
    assert all(any(key is mine for mine in live) for key in held)


def test_healthy_resources_share_one_result_and_messages_stay_their_own() -> None:
    prepared = prepare_desired((_web("a"), _web("b"), _web("c")), app="shop", namespace="shop")
    live = [_live_copy(prepared[0], 0), _live_copy(prepared[1], 1), _live_copy(prepared[2], 2)]
    live[2]["status"]["availableReplicas"] = 1  # still rolling out: a message of its own
    comparison = compare_app(app="shop", desired=prepared, live=live, assess=assess)
    first, second, third = (r.health for r in comparison.resources)
    assert first == second == HealthResult(HealthStatus.HEALTHY)
    assert first is second
    assert third is not None and third.status is HealthStatus.PROGRESSING and third.message
    assert comparison.health.status is HealthStatus.PROGRESSING


def test_the_desired_state_holds_the_rendered_objects_themselves(tmp_path: Path) -> None:

    repo = tmp_path / "repo"
    (repo / "web").mkdir(parents=True)
    (repo / "web" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: '1'}\n"
    )
    git_repo = pygit2.init_repository(str(repo), initial_head="main")
    git_repo.index.add_all()
    git_repo.index.write()
    sig = pygit2.Signature("t", "t@example.com")
    git_repo.create_commit("HEAD", sig, sig, "web", git_repo.index.write_tree(), [])
    raw = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "web", "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {"repoURL": repo.as_uri(), "path": "web", "targetRevision": "main"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"},
        },
    }
    app, _ = parse_application(Document(raw, "app.yaml", 0, 1))
    assert app is not None
    reader = SourceReader(git=GitCache(tmp_path / "cache"), clock=VirtualClock())
    state = reader.desired(app, raw)
    assert not state.errors
    (rendered,) = reader.render_cache._entries.values()  # the one render, cached
    assert [id(o) for o in state.objects] == [id(d.obj) for d in rendered.documents]


names = st.sampled_from(["a", "b", "c", "d"])
kinds = st.sampled_from(["ConfigMap", "Deployment", "Job"])
hook_notes = st.dictionaries(
    st.sampled_from(["argocd.argoproj.io/hook", "helm.sh/hook", "argocd.argoproj.io/sync-wave"]),
    st.sampled_from(["", "PreSync", "Skip", "PostSync,Skip", "pre-install", "crd-install", "2"]),
    max_size=2,
)


@st.composite
def _objects(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(kinds)
    api = "apps/v1" if kind == "Deployment" else "batch/v1" if kind == "Job" else "v1"
    meta: dict[str, Any] = {"name": draw(names)}
    notes = draw(hook_notes)
    if notes:
        meta["annotations"] = notes
    return {"apiVersion": api, "kind": kind, "metadata": meta, "data": {"k": draw(names)}}


def _hook_types_by_annotations(obj: dict[str, Any]) -> tuple[hooks.HookType, ...]:
    """The hook types read annotation by annotation, without the short cut for objects that
    carry neither hook annotation."""
    valid = {t.value for t in hooks.HookType}
    argo = annotation_values(obj, hooks.HOOK_ANNOTATION)
    found = tuple(hooks.HookType(v) for v in argo if v in valid)
    if found:
        return found
    mapped = (hooks._HELM_TYPES.get(v) for v in annotation_values(obj, hooks.HELM_HOOK))
    return tuple(dict.fromkeys(t for t in mapped if t is not None))


@settings(max_examples=200, deadline=None)
@given(desired=st.lists(_objects(), max_size=5), extra=st.lists(_objects(), max_size=3))
def test_comparisons_with_and_without_the_callers_keys_are_equal(
    desired: list[dict[str, Any]], extra: list[dict[str, Any]]
) -> None:
    for obj in desired:
        assert hooks.hook_types(obj) == _hook_types_by_annotations(obj)
    prepared = prepare_desired(desired, app="shop", namespace="shop")
    extras = prepare_desired(extra, app="shop", namespace="shop")
    live = [_live_copy(o, n) for n, o in enumerate([*prepared[::2], *extras])]
    known: list[ResourceKey] = [key_of(o) for o in live]
    plain = compare_app(app="shop", desired=prepared, live=live, assess=assess)
    keyed = compare_app(app="shop", desired=prepared, live=live, assess=assess, known_keys=known)
    assert keyed == plain
    assert [r.to_status() for r in keyed.resources] == [r.to_status() for r in plain.resources]
    assert (keyed.sync_status, keyed.health) == (plain.sync_status, plain.health)
