"""Over random commits, a long-running `SourceReader` - which carries an untouched app's
render over to the new commit after one tree diff per commit pair - hands every app what a
fresh reader renders from nothing at that commit: the same objects, revisions, errors,
warnings and content identity. The commits add, edit, remove and rename files inside and
outside the apps' paths (a path that is a prefix of another's, a nested path, include and
exclude globs), turn files into links leading out of a path and into submodules, and touch
the inputs a render reads outside its path: a Kustomize base, a Helm value file, another
source's `$values`."""

from __future__ import annotations

import os
import random
import re
from pathlib import Path
from typing import Any

import pygit2
import pytest
from app_harness import Remote, application, config_map, manifests

from headway.clock import VirtualClock
from headway.controllers.app.sources import DesiredState, SourceReader
from headway.model.application import Application, parse_application
from headway.model.yamlload import Document
from headway.source.git import GitCache
from source.gitrepos import require_extra

BLOB, LINK, COMMIT = (pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.LINK,
                      pygit2.enums.FileMode.COMMIT)  # fmt: skip

# Files the commits pick from: under the apps' paths and beside them.
POOL = [
    "apps/web/a.yaml", "apps/web/b.yml", "apps/web/nested/n.yaml", "apps/web/skip-me.yaml",
    "apps/web-canary/c.yaml", "apps/webx.yaml", "apps/other/o.yaml", "apps/linked/own.yaml",
    "apps/linked/cm.yaml", "base/cm.yaml", "base/extra.yaml", "overlays/prod/patch.yaml",
    "shared/cm.yaml", "envs/prod.yaml", "envs/values.yaml", "charts/web/values.yaml",
    "README.md",
]  # fmt: skip

CHART = {
    "charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    "charts/web/templates/cm.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: chart\n"
        "data:\n  flag: {{ .Values.flag | quote }}\n"
    ),
    "base/kustomization.yaml": "resources:\n  - cm.yaml\n",
    "overlays/prod/kustomization.yaml": "resources:\n  - ../../base\n",
}


def content(path: str, rnd: random.Random) -> str:
    if path.startswith(("envs/", "charts/")):
        return f"flag: v{rnd.randint(0, 9)}\n"
    name = path.replace("/", "-").replace(".", "-").lower()
    return manifests({**config_map(name), "data": {"v": str(rnd.randint(0, 9))}})


def commit_files(remote: Remote, files: dict[str, tuple[int, str]]) -> str:
    """A commit on `main` holding exactly `files` (mode, text; a link's text is its target)."""
    repo = remote.repo
    index = pygit2.Index()
    for path, (mode, text) in files.items():
        oid = (pygit2.Oid(hex=f"{len(text) + 1:040x}") if mode == COMMIT
               else repo.create_blob(text.encode()))  # fmt: skip
        index.add(pygit2.IndexEntry(path, oid, mode))
    ref = "refs/heads/main"
    parents = [repo.references[ref].target] if ref in repo.references else []
    sig = pygit2.Signature("Dev", "dev@example.com")
    return str(repo.create_commit(ref, sig, sig, "change", index.write_tree(repo), parents))


def random_change(rnd: random.Random, files: dict[str, tuple[int, str]]) -> None:
    """Write, remove or rename a file of the pool, or make it a link or a submodule."""
    path = rnd.choice(POOL)
    action = rnd.choice(["write", "write", "write", "remove", "rename", "link", "submodule"])
    if action == "remove":
        files.pop(path, None)
    elif action == "rename" and path in files:
        files[rnd.choice(POOL)] = files.pop(path)
    elif action == "link" and path.startswith("apps/"):
        # Links in the directory sources' paths, which are carried over. (Not at a Helm value
        # file: a kept failed render there may name another cause than a fresh one - a
        # dangling link against no file - though both fail; test_helm_linked_inputs.py
        # checks that a value file's link target is an input.)
        target = rnd.choice(POOL)
        files[path] = (LINK, os.path.relpath(target, os.path.dirname(path)))
    elif action == "submodule":
        files[path] = (COMMIT, str(rnd.random()))
    else:
        files[path] = (BLOB, content(path, rnd))


def applications(url: str) -> list[dict[str, Any]]:
    def app(name: str, path: str, **source: Any) -> dict[str, Any]:
        raw = application(name, url, path=path)
        raw["spec"]["source"].update(source)
        return raw

    multi = app("multi", "apps/web")
    multi["spec"]["sources"] = [
        multi["spec"].pop("source"),
        {"repoURL": url, "targetRevision": "main", "path": "apps/other"},
    ]
    values = app("values", "charts/web", helm={"valueFiles": ["$values/envs/values.yaml"]})
    values["spec"]["sources"] = [
        values["spec"].pop("source"),
        {"repoURL": url, "targetRevision": "main", "ref": "values"},
    ]
    return [
        app("web", "apps/web"),
        app("canary", "apps/web-canary"),
        app("nested", "apps/web/nested"),
        app("other", "apps/other"),
        app("linked", "apps/linked"),
        app("all", "apps", directory={"recurse": True, "exclude": "*skip*"}),
        app("picked", "apps/web", directory={"include": "{a.yaml,*.yml}"}),
        app("kustomize", "overlays/prod"),
        app("helm", "charts/web", helm={"valueFiles": ["../../envs/prod.yaml"]}),
        multi,
        values,
    ]


def parsed(raw: dict[str, Any]) -> Application:
    app, _ = parse_application(Document(raw, "test", 0, 0))
    assert app is not None
    return app


def seen(state: DesiredState) -> tuple[Any, ...]:
    """What the app's status and comparison are made of. A failed render's message names the
    commit it failed at, and a failure is kept (unchanged inputs) until it is retried after a
    poll interval (`test_failed_render_retried.py`): that commit, and the temporary directory
    of a Helm render, are left out of messages."""
    errors = tuple(
        re.sub(r"@[0-9a-f]{12}\b", "@<commit>", re.sub(r"/headway-helm-\w+/", "/<tmp>/", e))
        for e in state.errors
    )
    return (state.objects, state.revisions, errors, state.warnings, state.fingerprint)


@pytest.mark.parametrize("seed", range(2))
def test_a_kept_reader_renders_what_a_fresh_one_does(
    tmp_path: Path, clock: VirtualClock, seed: int
) -> None:
    require_extra("helm_python", "helm")
    rnd = random.Random(seed)
    remote = Remote(tmp_path / "remote.git")
    files = {path: (BLOB, text) for path, text in CHART.items()}
    files.update({path: (BLOB, content(path, rnd)) for path in POOL})
    commit_files(remote, files)
    git = GitCache(tmp_path / "git-cache")
    kept = SourceReader(git=git, clock=clock)
    apps = [(parsed(raw), raw) for raw in applications(remote.url)]
    carried = 0
    for step in range(40):
        for app, raw in apps:
            fresh = SourceReader(git=git, clock=clock).desired(app, raw)
            before = kept.render_cache.misses
            state = kept.desired(app, raw)
            assert seen(state) == seen(fresh), (step, app.name, sorted(files.items()))
            carried += kept.render_cache.misses == before
        for _ in range(rnd.randint(1, 3)):
            random_change(rnd, files)
        commit_files(remote, files)
        kept.mark_changed(remote.url)
    assert carried > 40 * len(apps) // 4  # the kept reader did carry renders over
