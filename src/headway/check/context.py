"""The input of every rule: Applications with what they render, projects, and lookups.

The CLI builds a `CheckContext` (it does the I/O: Git, renderers); the rules only read it.
Plain manifests that no Application owns form one extra unit with no Application, so the
workload rules see them too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from headway.check.drill_engine import DrillEngine, DrillSettings
from headway.check.manifest import as_dict, group_of, name_of, namespace_of, sync_wave
from headway.model.diagnostics import Diagnostic
from headway.model.manifests import ParseMemo
from headway.model.yamlload import Document

__all__ = ["AppUnit", "CheckContext", "UnresolvedSource"]


@dataclass(frozen=True)
class AppUnit:
    """One Application and the objects its sources render (what a sync would apply)."""

    name: str
    application: Document | None
    objects: tuple[Document, ...]

    @property
    def spec(self) -> dict[str, object]:
        return as_dict(as_dict(self.application.obj if self.application else {}).get("spec"))

    def of_kind(self, *kinds: str) -> Iterator[Document]:
        """The unit's objects of these kinds, in the unit's order."""
        if len(kinds) == 1:
            return iter(self._by_kind.get(kinds[0], ()))
        return (d for d in self.objects if d.kind in kinds)

    @cached_property
    def _by_kind(self) -> dict[str, list[Document]]:
        """The objects by kind, built once: the rules ask every unit for one kind dozens of
        times (a tenth of a check of 1,000 Applications went to reading each object's kind)."""
        found: dict[str, list[Document]] = {}
        for document in self.objects:
            found.setdefault(document.kind, []).append(document)
        return found

    @cached_property
    def _by_kind_name(self) -> dict[tuple[str, str], list[Document]]:
        """The objects by kind and name, in the unit's order (rules look targets up by name)."""
        found: dict[tuple[str, str], list[Document]] = {}
        for document in self.objects:
            found.setdefault((document.kind, name_of(document.obj)), []).append(document)
        return found

    def has_kind(self, *kinds: str) -> bool:
        """Whether the unit holds an object of one of these kinds."""
        return any(kind in self._by_kind for kind in kinds)

    @cached_property
    def last_wave(self) -> int:
        """The unit's last sync wave (0 when it has no objects)."""
        return max(self._waves.values(), default=0)

    def wave_of(self, document: Document) -> int:
        """`sync_wave(document.obj)`, read once per object of the unit."""
        wave = self._waves.get(id(document))
        return sync_wave(document.obj) if wave is None else wave

    @cached_property
    def _waves(self) -> dict[int, int]:
        """Each object's sync wave, by identity (the objects live as long as the unit)."""
        return {id(d): sync_wave(d.obj) for d in self.objects}

    def named(self, kind: str, name: str) -> tuple[Document, ...]:
        """Every object `kind/name` of the unit, in the unit's order."""
        return tuple(self._by_kind_name.get((kind, name), ()))

    def find(self, kind: str, name: str, namespace: str = "") -> Document | None:
        """The object `kind/name`, preferring one in `namespace` when several share a name.
        An empty name refers to nothing (not to an object missing its own name)."""
        if not name:
            return None
        matches = self._by_kind_name.get((kind, name), ())
        for doc in matches:
            if not namespace or namespace_of(doc.obj) in ("", namespace):
                return doc
        return matches[0] if matches else None


@dataclass(frozen=True)
class UnresolvedSource:
    """An Application source the CLI could not render, and why."""

    app: Document
    index: int
    reason: str


@dataclass(frozen=True)
class CheckContext:
    """Everything the rules look at.

    * `units` — one per Application, plus one unnamed unit of unowned plain manifests.
    * `unresolved` — sources that could not be rendered (reported, never skipped).
    * `custom_health` — `group/Kind` keys with a Lua health check (argocd-cm) or declared
      healthy-aware in the check config.
    * `base_crds` — CRDs at the base revision (previous commit or `--transition` base).
    * `library_paths` — per Application name, repository paths its render reads beyond its
      own source path (Helm `file://` dependencies, Kustomize bases outside the path).
    * `load_problems` — files of the repository that could not be read as YAML.
    * `run_time_sets` — ApplicationSets whose generators read what only the running
      controller has (open pull requests, a plugin service, cluster resources).
    * `external_templates` — (Cluster)AnalysisTemplate names the check config declares as
      installed from outside the repository.
    * `drill` — the drill engine the drill rules replay Rollouts with (None: they are off),
      and `drill_settings` — the scenario it plays (`drill:` in the check config).
    * `parses` — the typed views the loader built while validating, for rules to reuse.
    * `repeated_applications` — (kept, skipped) pairs: an Application whose namespace and
      name another definition already took (only the first is rendered and checked).
    * `derived` — what a rule module derives from the documents once and several rules ask
      for again (keyed by that module; see `gates.gate_refs`).
    """

    units: tuple[AppUnit, ...]
    unresolved: tuple[UnresolvedSource, ...] = ()
    custom_health: frozenset[str] = frozenset()
    base_crds: tuple[Document, ...] = ()
    library_paths: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    load_problems: tuple[Diagnostic, ...] = ()
    run_time_sets: tuple[Diagnostic, ...] = ()
    external_templates: frozenset[str] = frozenset()
    drill: DrillEngine | None = None
    drill_settings: DrillSettings = field(default_factory=DrillSettings)
    parses: ParseMemo = field(default_factory=ParseMemo)
    repeated_applications: tuple[tuple[Document, Document], ...] = ()
    derived: dict[object, object] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def all_objects(self) -> tuple[Document, ...]:
        return tuple(doc for unit in self.units for doc in unit.objects)

    def objects_of_kind(self, kind: str) -> Iterator[Document]:
        """`all_objects` of one kind, in their order."""
        return (document for _unit, document in self.units_of_kind(kind))

    def units_of_kind(self, kind: str) -> tuple[tuple[AppUnit, Document], ...]:
        """Each object of one kind with its unit, in `all_objects` order: what a rule that
        looks at one kind walks, without visiting every unit (nothing, for a kind the
        repository lacks)."""
        return self._units_by_kind.get(kind, ())

    @cached_property
    def _units_by_kind(self) -> dict[str, tuple[tuple[AppUnit, Document], ...]]:
        """Every object with its unit, by kind, built once: two dozen rules each walked every
        unit to ask it for one kind (a tenth of the rules' time on 1,000 Applications)."""
        found: dict[str, list[tuple[AppUnit, Document]]] = {}
        for unit in self.units:
            for document in unit.objects:
                found.setdefault(document.kind, []).append((unit, document))
        return {kind: tuple(pairs) for kind, pairs in found.items()}

    @cached_property
    def applications(self) -> tuple[AppUnit, ...]:
        return tuple(u for u in self.units if u.application is not None)

    def application_documents(self) -> Iterator[tuple[AppUnit, Document]]:
        """Each Application unit with its Application document (never None here)."""
        for unit in self.applications:
            assert unit.application is not None
            yield unit, unit.application

    @cached_property
    def projects(self) -> dict[str, Document]:
        return {
            name_of(d.obj): d
            for d in self.objects_of_kind("AppProject")
            if group_of(as_dict(d.obj).get("apiVersion")) == "argoproj.io"
        }

    @cached_property
    def _by_kind_name(self) -> dict[tuple[str, str], list[Document]]:
        index: dict[tuple[str, str], list[Document]] = {}
        for doc in self.all_objects:
            index.setdefault((doc.kind, name_of(doc.obj)), []).append(doc)
        return index

    def lookup(
        self, kind: str, name: str, *, near: AppUnit | None = None, beside: Document | None = None
    ) -> Document | None:
        """An object by kind and name: first in `near`'s own objects, then anywhere. Of
        several in `near` with that name, the one in `beside`'s file comes first: the plain
        manifests no Application owns are one unit, so a directory of separate examples (Argo
        Rollouts' test/e2e) holds several templates of one name, each beside its Rollout."""
        if near is not None:
            if beside is not None:
                for document in near.named(kind, name):
                    if document.file == beside.file:
                        return document
            found = near.find(kind, name)
            if found is not None:
                return found
        matches = self._by_kind_name.get((kind, name))
        return matches[0] if matches else None
