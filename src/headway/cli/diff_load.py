"""The I/O edge of `headway diff BASE..HEAD`: Git, renders, checks; the review is pure.

Both revisions are read straight from the object database (no checkout, no network) and
loaded by the loader `headway check` uses, so every Application is found and rendered as
`headway serve` would render it (app-of-apps children included). The two loaders share one
`RenderMemo`: a file parses once per blob and a source renders once per set of input ids,
so a source the change leaves alone renders once for both revisions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from headway.check import argocd_cm_rules
from headway.check.context import AppUnit, CheckContext
from headway.check.drill_engine import DrillEngine, DrillSettings, DrillVerdict
from headway.check.findings import Finding
from headway.check.manifest import name_of, namespace_of, normalize_repo_url
from headway.check.registry import run_checks
from headway.cli.check import (
    UsageError,
    _commit,
    _repository,
    _self_urls,
    _subpath,
    _tree_at,
    build_loader,
    load_config,
)
from headway.cli.check_loader import RenderMemo, RepositoryLoader
from headway.cli.check_transition import transition_findings
from headway.diff import CompiledRule, IgnoreRuleError, compile_system_rules
from headway.model.argocd_diff import CompareOptions
from headway.model.diagnostics import Severity
from headway.model.manifests import ParseMemo
from headway.model.yamlload import Document
from headway.review.app_review import AppRenders, review_app
from headway.review.findings import mark_findings
from headway.review.model import AppReview, Review
from headway.review.reads import InRepository as ReadsRepository
from headway.review.reads import read_paths, touching
from headway.source.plugins import PluginCatalog

__all__ = ["DiffRange", "load_review", "parse_range"]

AppKey = tuple[str, str]  # namespace, name
_FILES_SHOWN = 5  # changed files named per Application; the rest are counted


@dataclass(frozen=True)
class DiffRange:
    base: str
    head: str
    merge_base: bool  # `BASE...HEAD`: from where HEAD forked off BASE, as `git diff` reads it


def parse_range(text: str) -> DiffRange:
    three = "..." in text
    base, sep, head = text.partition("..." if three else "..")
    if not sep or not base or not head:
        raise UsageError(f"the range must read BASE..HEAD (or BASE...HEAD), got {text!r}")
    return DiffRange(base, head, three)


@dataclass(frozen=True)
class _Side:
    commit: pygit2.Commit
    loader: RepositoryLoader
    context: CheckContext

    def apps(self) -> dict[AppKey, AppUnit]:
        return {
            (namespace_of(u.application.obj), name_of(u.application.obj)): u
            for u in self.context.applications
            if u.application is not None
        }


def load_review(
    path: Path,
    spec: DiffRange,
    *,
    config_file: Path | None = None,
    plugins: PluginCatalog | None = None,
) -> Review:
    if not path.is_dir():
        raise UsageError(f"{path} is not a directory")
    repo = _repository(path)
    if repo is None:
        raise UsageError(f"{path} is not in a Git repository")
    config, config_dir = load_config(path, config_file)
    base_commit, head_commit = _commits(repo, spec)
    sub = _subpath(repo, path)
    memo = RenderMemo()
    loader, _ = build_loader(
        path, revision=None, config=config, config_dir=config_dir, plugins=plugins
    )
    if loader.drill is not None:
        loader.drill = _DrillMemo(loader.drill)
    base, head = (
        _load_side(repo, loader, commit, sub=sub, label=label, memo=memo)
        for commit, label in ((base_commit, spec.base), (head_commit, spec.head))
    )
    changed = _changed_files(repo, base_commit, head_commit, sub)
    between, _ = transition_findings(
        repo,
        f"{base_commit.id}..{head_commit.id}",
        sub=sub,
        make_loader=lambda tree: _memoized(loader.with_tree(tree), memo),
    )
    findings = (
        [*run_checks(head.context, disabled=config.disable), *between],
        run_checks(base.context, disabled=config.disable),
    )
    urls = _self_urls(repo, config)
    system, system_problems = _system_rules(head.context)
    options = argocd_cm_rules.compare_options(head.context)
    apps = _affected(
        base, head, changed, urls=urls, findings=findings, system=system, options=options
    )
    return Review(
        base=spec.base,
        head=spec.head,
        base_commit=str(base_commit.id),
        head_commit=str(head_commit.id),
        changed_files=changed,
        apps=apps,
        problems=(*_head_problems(head, changed), *system_problems),
    )


def _commits(repo: pygit2.Repository, spec: DiffRange) -> tuple[pygit2.Commit, pygit2.Commit]:
    head = _commit(repo, spec.head)
    base = _commit(repo, spec.base)
    if spec.merge_base:
        fork = repo.merge_base(base.id, head.id)
        if fork is None:
            raise UsageError(f"{spec.base} and {spec.head} have no common ancestor")
        base = repo[fork].peel(pygit2.Commit)
    return base, head


def _memoized(loader: RepositoryLoader, memo: RenderMemo) -> RepositoryLoader:
    loader.memo = memo
    return loader


@dataclass
class _DrillMemo:
    """The drill gate once per Rollout document: both revisions share the documents of what
    the change left alone, and replaying a Rollout is the costliest rule."""

    engine: DrillEngine
    verdicts: dict[tuple[object, ...], tuple[Document, DrillVerdict]] = field(default_factory=dict)

    def __call__(
        self,
        rollout: Document,
        templates: Mapping[str, Document],
        settings: DrillSettings,
        *,
        parses: ParseMemo | None = None,
    ) -> DrillVerdict:
        key = (id(rollout), settings, *sorted((k, id(v)) for k, v in templates.items()))
        if key not in self.verdicts:
            verdict = self.engine(rollout, templates, settings, parses=parses)
            self.verdicts[key] = (rollout, verdict)
        return self.verdicts[key][1]


def _load_side(
    repo: pygit2.Repository,
    loader: RepositoryLoader,
    commit: pygit2.Commit,
    *,
    sub: str,
    label: str,
    memo: RenderMemo,
) -> _Side:
    side_loader = _memoized(loader.with_tree(_tree_at(repo, commit, sub, label)), memo)
    return _Side(commit, side_loader, side_loader.load())


def _changed_files(
    repo: pygit2.Repository, base: pygit2.Commit, head: pygit2.Commit, sub: str
) -> tuple[str, ...]:
    """Files added, removed, changed or renamed (both names), relative to `sub`."""
    prefix = f"{sub}/" if sub else ""
    names: set[str] = set()
    for delta in base.tree.diff_to_tree(head.tree).deltas:
        names.update({delta.old_file.path, delta.new_file.path})
    return tuple(sorted(n[len(prefix) :] for n in names if n.startswith(prefix)))


def _affected(
    base: _Side,
    head: _Side,
    changed: tuple[str, ...],
    *,
    urls: frozenset[str],
    findings: tuple[list[Finding], list[Finding]],
    system: tuple[CompiledRule, ...],
    options: CompareOptions,
) -> tuple[AppReview, ...]:
    before, after = base.apps(), head.apps()
    affected: dict[AppKey, tuple[AppRenders, tuple[str, ...]]] = {}
    for key in sorted(before.keys() | after.keys()):
        renders = AppRenders(before.get(key), after.get(key))
        reasons = _reasons(renders, changed, base=base, head=head, urls=urls)
        if reasons:
            affected[key] = (renders, reasons)
    marked = mark_findings(findings[0], findings[1], apps={k[1] for k in affected})
    return tuple(
        review_app(
            renders,
            reasons=reasons,
            findings=marked.get(key[1], ()),
            errors=_render_errors(key, base=base, head=head),
            system_rules=system,
            compare_options=options,
        )
        for key, (renders, reasons) in affected.items()
    )


def _system_rules(context: CheckContext) -> tuple[tuple[CompiledRule, ...], tuple[str, ...]]:
    """The system-wide ignore rules of the repository's argocd-cm at HEAD, and what is wrong
    with those left out. With a malformed rule the controller compares no Application at all
    (`headway check` reports it, HW003); this review applies the others, and names it, since
    the review may then differ from what the controller would show once it is fixed."""
    entries = argocd_cm_rules.system_entries(context)
    problems = tuple(
        f"HEAD: {error}: the controller compares no Application while a system-wide ignore "
        "rule is malformed; this review leaves the rule out"
        for error in argocd_cm_rules.system_rule_errors(context)
    )
    try:
        return compile_system_rules([entry.rule for entry in entries]), problems
    except IgnoreRuleError as err:  # read already; only a compile the reader did not try
        return (), (*problems, f"HEAD: argocd-cm: {err}: this review applies no system rule")


def _reasons(
    renders: AppRenders,
    changed: tuple[str, ...],
    *,
    base: _Side,
    head: _Side,
    urls: frozenset[str],
) -> tuple[str, ...]:
    """Why the Application counts as affected (empty: it does not)."""
    if renders.base is None:
        return ("the Application is new at HEAD",)
    if renders.head is None:
        return ("the Application is gone at HEAD",)
    reasons = []
    if renders.spec_changed():
        reasons.append("its Application manifest changed")
    if [d.obj for d in renders.base.objects] != [d.obj for d in renders.head.objects]:
        reasons.append("it renders differently")
    files: dict[str, None] = {}
    for unit, side in ((renders.base, base), (renders.head, head)):
        assert unit.application is not None
        library = side.context.library_paths.get(unit.name, ())
        reads = read_paths(unit.application.obj, library=library, in_repository=_in(urls))
        files.update(dict.fromkeys(touching(changed, reads)))
    shown = list(files)[:_FILES_SHOWN]
    reasons.extend(f"it reads {file}, which changed" for file in shown)
    if len(files) > len(shown):
        reasons.append(f"it reads {len(files) - len(shown)} more changed files")
    return tuple(reasons)


def _in(urls: frozenset[str]) -> ReadsRepository:
    return lambda url: normalize_repo_url(url) in urls


def _render_errors(key: AppKey, *, base: _Side, head: _Side) -> tuple[str, ...]:
    errors = []
    for label, side in (("BASE", base), ("HEAD", head)):
        for problem in side.context.unresolved:
            app = problem.app.obj
            if (namespace_of(app), name_of(app)) == key:
                errors.append(f"{label}: {problem.reason}")
    return tuple(errors)


def _head_problems(head: _Side, changed: tuple[str, ...]) -> tuple[str, ...]:
    """HEAD's errors in files the change touched: what `headway validate` would reject there."""
    touched = set(changed)
    return tuple(
        f"HEAD: {d}"
        for d in head.context.load_problems
        if d.severity is Severity.ERROR and d.file in touched
    )
