"""Which Applications read which repository paths: the source watcher's index of the fleet.
Purely computational (the watcher lists, gets and reads trees; this only files the answers).

Kept current one Application at a time from watch events, so a commit finds the apps that
read one of its changed files by looking up each changed file's directories, not by asking
every app of the repository (at 10,000 apps that look cost seconds before the changed app's
reconcile began). An app's reads in a repository are what `headway diff` says it reads
(`headway.review.reads`): its source path, its Helm value files, and the library paths its
render climbs out to. Library paths come from the repository's trees, so they are filed
later (`set_library`) and an app whose library paths are not known yet is listed by
`without_library` until they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from headway.controllers.manager import ObjectKey
from headway.review.reads import read_paths
from headway.source.spec import raw_sources

__all__ = ["FleetReads", "app_key", "in_store_order"]


def app_key(app: dict[str, Any]) -> ObjectKey:
    meta = app.get("metadata") or {}
    return ObjectKey(str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def in_store_order(keys: Iterable[ObjectKey]) -> list[ObjectKey]:
    """`keys` by (namespace, name), as the store lists them (by plain tuples: the
    dataclass's own comparison cost 0.3 s for 10,000 keys)."""
    return sorted(keys, key=lambda key: (key.namespace, key.name))


def _ancestors(file: str) -> Iterable[str]:
    """"" (the whole repository), then each directory down to `file` itself."""
    yield ""
    parts = file.split("/")
    for end in range(1, len(parts) + 1):
        yield "/".join(parts[:end])


class FleetReads:
    def __init__(self) -> None:
        self._apps: dict[ObjectKey, dict[str, Any]] = {}
        self._by_url: dict[str, set[ObjectKey]] = {}
        # (url, path) -> the apps reading it: their own reads, and their library paths
        self._by_path: dict[tuple[str, str], set[ObjectKey]] = {}
        self._by_library: dict[tuple[str, str], set[ObjectKey]] = {}
        self._libraries: dict[tuple[ObjectKey, str], tuple[str, ...]] = {}
        self._unknown: dict[str, set[ObjectKey]] = {}  # per url: library paths not known

    def __len__(self) -> int:
        return len(self._apps)

    def replace_all(self, apps: Iterable[dict[str, Any]]) -> None:
        """Forget every app (and its library paths), then file `apps`."""
        for key in list(self._apps):
            self.remove(key)
        for app in apps:
            self.put(app)

    def put(self, app: dict[str, Any]) -> None:
        """File `app` (again, after an edit): its library paths are unknown until filed."""
        key = app_key(app)
        self.remove(key)
        self._apps[key] = app
        for url in self._urls(app):
            self._by_url.setdefault(url, set()).add(key)
            self._unknown.setdefault(url, set()).add(key)
            for path in read_paths(app, library=(), in_repository=url.__eq__):
                self._by_path.setdefault((url, path), set()).add(key)

    def remove(self, key: ObjectKey) -> None:
        app = self._apps.pop(key, None)
        if app is None:
            return
        for url in self._urls(app):
            self._by_url[url].discard(key)
            self._unknown.get(url, set()).discard(key)
            self._drop_library(key, url)
            for path in read_paths(app, library=(), in_repository=url.__eq__):
                self._by_path[(url, path)].discard(key)

    def app(self, key: ObjectKey) -> dict[str, Any]:
        return self._apps[key]

    def urls(self) -> list[str]:
        """Every repoURL an app reads, sorted."""
        return sorted(url for url, keys in self._by_url.items() if keys)

    def reading(self, url: str) -> list[ObjectKey]:
        """The apps reading `url`, in the store's order (namespace, name)."""
        return in_store_order(self._by_url.get(url, ()))

    def touched(self, url: str, files: Sequence[str]) -> set[ObjectKey]:
        """The apps reading a file of `files` in `url`: its path, a value file, or a known
        library path holds it. A few lookups per changed file, whatever the fleet."""
        found: set[ObjectKey] = set()
        for file in files:
            for path in _ancestors(file):
                found |= self._by_path.get((url, path), set())
                found |= self._by_library.get((url, path), set())
        return found

    def without_library(self, url: str) -> list[ObjectKey]:
        """The apps reading `url` whose library paths there are not known yet."""
        return in_store_order(self._unknown.get(url, ()))

    def set_library(self, key: ObjectKey, url: str, paths: tuple[str, ...]) -> None:
        """File the library paths `key`'s sources in `url` climb out to."""
        if key not in self._apps:
            return
        self._drop_library(key, url)
        self._libraries[(key, url)] = paths
        for path in paths:
            self._by_library.setdefault((url, path), set()).add(key)
        self._unknown.get(url, set()).discard(key)

    def forget_library(self, key: ObjectKey, url: str) -> None:
        """`key`'s library paths in `url` may have changed (a file under its path did)."""
        if key in self._apps and url in self._urls(self._apps[key]):
            self._unknown.setdefault(url, set()).add(key)

    def forget_libraries(self, url: str) -> None:
        """Every app's library paths in `url` may have changed (a ref came or went)."""
        self._unknown[url] = set(self._by_url.get(url, ()))

    def library(self, key: ObjectKey, url: str) -> tuple[str, ...]:
        return self._libraries.get((key, url), ())

    def _drop_library(self, key: ObjectKey, url: str) -> None:
        for path in self._libraries.pop((key, url), ()):
            self._by_library[(url, path)].discard(key)

    @staticmethod
    def _urls(app: dict[str, Any]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(str(s.get("repoURL") or "") for s in raw_sources(app)))
