"""argocd-cm's diff customizations as the Application controller uses them.

`read_diff_customizations` reads the `argocd-cm` ConfigMap from the control-plane store;
`SystemDiff` compiles its rules once and says, when a key is malformed, the error every
comparison reports instead (Argo CD compares nothing then either). `SystemDiffReader` keeps
one and reads the ConfigMap again at most every `REREAD_SECONDS`, so an edit applies to
the following comparisons without a restart, as Argo CD's settings watch does. The parsing
is `model.argocd_diff`'s, shared with `headway validate` and `headway check`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from headway.check.system_ignore_risk import HiddenRelease, releases_hidden_by
from headway.clock import Clock
from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster
from headway.controllers.app.names import DEFAULT_APPS_NAMESPACE
from headway.diff import CompiledRule, IgnoreRuleError, compile_system_rules
from headway.model.argocd_cm import ARGOCD_CM_NAME
from headway.model.argocd_diff import CompareOptions, DiffCustomizations, diff_customizations

__all__ = [
    "REREAD_SECONDS",
    "ComparisonRules",
    "SystemDiff",
    "SystemDiffReader",
    "hidden_release_warnings",
    "problem_lines",
    "read_diff_customizations",
]

_DEFAULT_OPTIONS = CompareOptions()
# How long the controller uses what it read of argocd-cm before reading it again.
REREAD_SECONDS = 10.0


def read_diff_customizations(
    store: Cluster, namespace: str = DEFAULT_APPS_NAMESPACE
) -> DiffCustomizations:
    """The diff customizations of the store's argocd-cm; Argo CD's defaults when there is
    none (or it cannot be read: the controller reports that itself)."""
    try:
        return _read(store, namespace)[0]
    except ClusterError:
        return DiffCustomizations()


def problem_lines(settings: DiffCustomizations) -> list[str]:
    """`argocd-cm: KEY: message` for each problem, warnings marked, then a warning for each
    rule that hides a release (`headway check`'s HW322 judgement): what `headway serve`
    prints at start (the controller then reads argocd-cm again on its own, and reports the
    hidden releases on the Applications that deploy the kinds concerned)."""
    problems = [
        f"{ARGOCD_CM_NAME}: {p.key}: {'' if p.error else 'warning: '}{p.message}"
        for p in settings.problems
    ]
    hidden = [f"{ARGOCD_CM_NAME}: {h.key}: warning: {h.message}" for h in _hidden(settings)]
    return problems + hidden


def _hidden(settings: DiffCustomizations) -> tuple[HiddenRelease, ...]:
    return tuple(h for rule in settings.ignores for h in releases_hidden_by(rule))


def hidden_release_warnings(
    hidden: Sequence[HiddenRelease], objects: Iterable[dict[str, Any]]
) -> list[str]:
    """The messages of the `hidden` releases that concern a kind among `objects` (an app's
    rendered objects): an app deploying no Rollout is not told about a rule on Rollouts."""
    if not hidden:
        return []
    deployed = {(_group(o), str(o.get("kind") or "")) for o in objects}
    return [h.message for h in hidden if deployed.intersection(h.targets)]


def _group(obj: dict[str, Any]) -> str:
    api_version = str(obj.get("apiVersion") or "")
    return api_version.rpartition("/")[0]


def _read(store: Cluster, namespace: str) -> tuple[DiffCustomizations, str]:
    """The customizations and the ConfigMap's resourceVersion ("" when there is none);
    ClusterError when the store would not say whether there is one."""
    try:
        configmap = store.get("v1", "ConfigMap", ARGOCD_CM_NAME, namespace)
    except NotFound:
        return DiffCustomizations(), ""
    data = configmap.get("data")
    version = str((configmap.get("metadata") or {}).get("resourceVersion") or "")
    settings = diff_customizations(data) if isinstance(data, dict) else DiffCustomizations()
    return settings, version


@dataclass(frozen=True)
class SystemDiff:
    """The compiled system-wide rules and compare options, or the error that stops every
    comparison; `identity` tells two readings apart (comparisons are cached under it)."""

    rules: tuple[CompiledRule, ...] = ()
    options: CompareOptions = _DEFAULT_OPTIONS
    error: str = ""
    identity: str = ""
    hidden: tuple[HiddenRelease, ...] = ()  # the rules that hide a release (HW322)

    @classmethod
    def of(cls, settings: DiffCustomizations, *, identity: str = "") -> SystemDiff:
        problems = [f"{ARGOCD_CM_NAME}: {p.key}: {p.message}" for p in settings.errors]
        try:
            rules = compile_system_rules(settings.ignores)
        except IgnoreRuleError as err:
            problems.append(f"{ARGOCD_CM_NAME}: {err}")
            rules = ()
        if problems:
            return cls(error="; ".join(problems), identity=identity)
        return cls(rules, settings.compare, identity=identity, hidden=_hidden(settings))


@dataclass(frozen=True)
class ComparisonRules:
    """What one app's comparison runs under: its rules (its own, then the system-wide
    ones), the compare options, and an identity for the comparison cache; `hidden`: the
    system-wide rules that hide a release, for the app's warnings."""

    rules: tuple[CompiledRule, ...]
    options: CompareOptions
    identity: str
    hidden: tuple[HiddenRelease, ...] = ()

    @classmethod
    def of(
        cls,
        app_rules: tuple[CompiledRule, ...],
        app_identity: str,
        system: SystemDiff,
        owned: tuple[tuple[CompiledRule, ...], str] = ((), ""),
    ) -> ComparisonRules:
        """IgnoreRuleError when argocd-cm has a malformed key (Argo CD then compares nothing).
        `owned`: the rules for the router fields the app's Rollouts write, and their identity
        (`rollout_owned.owned_rules`)."""
        if system.error:
            raise IgnoreRuleError(system.error)
        owned_rules, owned_identity = owned
        identity = f"{app_identity} {system.identity}"
        if owned_identity:
            identity = f"{identity} owned:{owned_identity}"
        rules = (*app_rules, *owned_rules, *system.rules)
        return cls(rules, system.options, identity, system.hidden)


class SystemDiffReader:
    """The `SystemDiff` of the store's argocd-cm, read again when `REREAD_SECONDS` have
    passed on `clock` and compiled again only when its resourceVersion changed. A store that
    does not answer keeps the last reading (and, with none yet, is an error every comparison
    reports): the rules are never taken as gone. `fixed` settings (tests, embedders) are used
    as given and never read. `announce` gets the `problem_lines` of each reading that
    replaces an earlier one (`headway serve` prints them; those of the first reading are
    printed at start)."""

    def __init__(
        self,
        store: Cluster,
        clock: Clock,
        *,
        namespace: str = DEFAULT_APPS_NAMESPACE,
        fixed: DiffCustomizations | None = None,
        announce: Callable[[str], None] | None = None,
    ) -> None:
        self._announce = announce
        self._store = store
        self._clock = clock
        self._namespace = namespace
        self._current = SystemDiff.of(fixed, identity="given") if fixed is not None else None
        self._fixed = fixed is not None
        self._read_until: datetime | None = None

    def current(self) -> SystemDiff:
        if self._fixed and self._current is not None:
            return self._current
        now = self._clock.now()
        if self._current is not None and self._read_until is not None and now < self._read_until:
            return self._current
        try:
            settings, version = _read(self._store, self._namespace)
        except ClusterError as err:  # never compare as if the rules were gone
            if self._current is None:
                return SystemDiff(error=f"{ARGOCD_CM_NAME} could not be read: {err}")
            return self._current  # the last reading, until the store answers again
        if self._current is None or self._current.identity != version:
            if self._current is not None and self._announce is not None:
                for line in problem_lines(settings):
                    self._announce(line)
            self._current = SystemDiff.of(settings, identity=version)
        self._read_until = now + timedelta(seconds=REREAD_SECONDS)
        return self._current
