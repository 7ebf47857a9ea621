"""`headway check [PATH]`: static safety analysis of a GitOps repository, with no cluster.

Renders every Application found (app-of-apps, directories of Applications, plain manifests)
from the working tree or from `--revision`, runs the rules of `headway.check`, and prints
text, JSON or SARIF. Exit status: 0 clean, 1 when any error (any warning with `--strict`),
2 for usage errors (a missing path, an unknown revision, a bad config file).
"""

from __future__ import annotations

import os
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from headway.cli import quick_exit
from headway.cli.plugin_options import (
    DEFAULT_PLUGIN_TIMEOUT_SECONDS,
    PluginsDirOption,
    PluginTimeoutOption,
    load_catalog,
)
from headway.model.diagnostics import Severity

# Git, the loader, the renderers and the rules load inside the functions that check, so that
# `headway check --help` (and `diff` and `appset`, which share this module) start light.
if TYPE_CHECKING:
    import pygit2
    import yaml

    from headway.check.config import CheckConfig
    from headway.check.drill_engine import DrillSettings
    from headway.check.findings import Finding
    from headway.cli.check_crd_scans import CrdScans
    from headway.cli.check_drill_cache import DrillAnswers
    from headway.cli.check_loader import RepositoryLoader
    from headway.cli.check_parse_cache import ParseCache
    from headway.cli.check_tree import ReadOnceTree
    from headway.model.yamlload import Document
    from headway.source.plugins import PluginCatalog
    from headway.source.tree import GitTree, TreeReader

__all__ = ["register", "run_check"]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit status 2."""


def _repository(path: Path) -> pygit2.Repository | None:
    """The Git repository containing `path`, searching upwards; None outside any.

    Opening does the search itself. `pygit2.discover_repository` is avoided: where it finds
    nothing it returns None without taking a reference (pygit2 1.21), so every call outside a
    repository loses one, and a long-lived process calling the check dies in `none_dealloc`.
    """
    if not _may_be_in_repository(path):
        return None
    import pygit2

    try:
        return pygit2.Repository(str(path))
    except pygit2.GitError:
        return None


def _may_be_in_repository(path: Path) -> bool:
    """False only where libgit2's search cannot find a repository: no directory from `path`
    up (as given and resolved) holds a `.git` (a directory or a link file) or a `HEAD` (a
    bare repository's). Answered without loading pygit2, which a directory outside any
    repository (an export checked in CI) would load for nothing."""
    given = path.absolute()
    for start in (given, given.resolve()):
        for directory in (start, *start.parents):
            if os.path.lexists(directory / ".git") or os.path.lexists(directory / "HEAD"):
                return True
    return False


def _subpath(repo: pygit2.Repository, path: Path) -> str:
    workdir = Path(repo.workdir or path).resolve()
    relative = path.resolve().relative_to(workdir).as_posix()
    return "" if relative == "." else relative


def _commit(repo: pygit2.Repository, revision: str) -> pygit2.Commit:
    import pygit2

    try:
        return repo.revparse_single(revision).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError) as err:
        raise UsageError(f"unknown revision {revision!r} in {repo.workdir}: {err}") from None


def _tree_at(repo: pygit2.Repository, commit: pygit2.Commit, sub: str, label: str) -> GitTree:
    import pygit2

    from headway.source.tree import GitTree

    tree = commit.tree
    if sub:
        try:
            tree = repo[tree[sub].id].peel(pygit2.Tree)
        except KeyError:
            raise UsageError(f"{sub!r} does not exist at {label}") from None
    return GitTree(repo, tree, f"{repo.workdir}@{label}")


def _base_commit(repo: pygit2.Repository, revision: str | None) -> pygit2.Commit | None:
    """The previous state to compare CRDs with: the parent of `--revision`; for the working
    tree, HEAD when there are uncommitted changes, else HEAD's parent."""
    import pygit2

    try:
        if revision is not None:
            commit = _commit(repo, revision)
        else:
            commit = repo.head.peel(pygit2.Commit)
            dirty = any(
                flags not in (pygit2.enums.FileStatus.CURRENT, pygit2.enums.FileStatus.IGNORED)
                and flags != pygit2.enums.FileStatus.WT_NEW
                for flags in repo.status().values()
            )
            if dirty:
                return commit
    except (pygit2.GitError, KeyError):
        return None
    return commit.parents[0] if commit.parents else None


def load_config(root: Path, explicit: Path | None) -> tuple[CheckConfig, Path]:
    import yaml

    from headway.check.config import CheckConfig, ConfigError, parse_config
    from headway.check.registry import ALL_RULES
    from headway.drill.scenario import ScenarioError, parse_scenario
    from headway.model import yamlload

    file = _config_file(root, explicit)
    if file is not None:
        try:
            data = yamlload.load_one(file.read_text(encoding="utf-8"))
            config = parse_config(data, str(file), {r.id for r in ALL_RULES})
            parse_scenario(config.drill.scenario)
            return config, file.parent
        except UnicodeDecodeError:
            raise UsageError(f"{file}:1: not UTF-8 text") from None
        except ScenarioError as err:
            raise UsageError(f"{file}: drill.scenario: {err}") from None
        except (yaml.YAMLError, ConfigError) as err:
            text = _yaml_error(file, err) if isinstance(err, yaml.YAMLError) else str(err)
            raise UsageError(text) from None
    return CheckConfig(), root


def _config_file(root: Path, explicit: Path | None) -> Path | None:
    """The config file a check of `root` reads, or None; `UsageError` when `explicit` names
    none."""
    from headway.check.config import CONFIG_FILES

    if explicit is not None:
        if not explicit.is_file():
            raise UsageError(f"config file {explicit} does not exist")
        return explicit
    return next((f for f in (root / name for name in CONFIG_FILES) if f.is_file()), None)


def _drill_settings_only(root: Path, explicit: Path | None) -> DrillSettings:
    """The drill settings `load_config` would give, without loading the rules (a first
    run's child drills with them, `check_prefetch`); raises where the file cannot be read,
    and where `load_config` would refuse it, the run ends with its error anyway."""
    from headway.check.config import drill_settings_of
    from headway.check.drill_engine import DrillSettings
    from headway.model import yamlload

    file = _config_file(root, explicit)
    if file is None:
        return DrillSettings()
    return drill_settings_of(yamlload.load_one(file.read_text(encoding="utf-8")), str(file))


def _yaml_error(file: Path, err: yaml.YAMLError) -> str:
    """`file:line: YAML syntax error: problem`, not PyYAML's multi-line dump of a buffer."""
    import yaml

    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        return f"{file}{line}: YAML syntax error: {err.problem or err.context or 'invalid YAML'}"
    return f"{file}: {err}"


def _self_urls(repo: pygit2.Repository | None, config: CheckConfig) -> frozenset[str]:
    from headway.check.manifest import normalize_repo_url

    urls = set(config.self_urls)
    if repo is not None:
        for remote in repo.remotes:
            if remote.name == "origin" and remote.url:
                urls.add(normalize_repo_url(remote.url))
    return frozenset(urls)


def _other_trees(config: CheckConfig, base: Path) -> dict[str, TreeReader]:
    from headway.source.tree import FilesystemTree

    trees: dict[str, TreeReader] = {}
    for url, local in config.repositories.items():
        directory = (base / local).resolve()
        if not directory.is_dir():
            raise UsageError(f"repositories: {url} maps to {directory}, which is not a directory")
        trees[url] = FilesystemTree(directory)
    return trees


def build_loader(
    path: Path,
    *,
    revision: str | None,
    config: CheckConfig,
    config_dir: Path,
    plugins: PluginCatalog | None = None,
    parse_cache: ParseCache | None = None,
    drill_answers: DrillAnswers | None = None,
    tree: ReadOnceTree | None = None,
) -> tuple[RepositoryLoader, pygit2.Repository | None]:
    """The loader of the checkout at `path` (or of `revision`); `tree` is the checkout's
    tree when the caller made it already (`_tree_parsed_ahead`)."""
    from headway.check.known_health import BUILTIN_HEALTH_KINDS
    from headway.cli.check_drill import drill_gate
    from headway.cli.check_loader import RepositoryLoader
    from headway.cli.check_tree import ReadOnceTree
    from headway.source.plugins import PluginCatalog
    from headway.source.tree import FilesystemTree

    repo = _repository(path)
    source: TreeReader = FilesystemTree(path)
    if revision is not None:
        if repo is None:
            raise UsageError(f"--revision needs a Git repository, and {path} is not in one")
        source = _tree_at(repo, _commit(repo, revision), _subpath(repo, path), revision)
    loader = RepositoryLoader(
        tree=tree if tree is not None and revision is None else ReadOnceTree(source),
        self_urls=_self_urls(repo, config),
        other_trees=_other_trees(config, config_dir),
        custom_health=BUILTIN_HEALTH_KINDS | config.health,
        external_templates=config.external_templates,
        drill=drill_gate if drill_answers is None else partial(drill_gate, answers=drill_answers),
        drill_settings=config.drill,
        plugins=plugins or PluginCatalog(),
        parse_cache=parse_cache,
        validation_answers=drill_answers,
    )
    return loader, repo


def run_check(
    path: Path,
    *,
    revision: str | None = None,
    config_file: Path | None = None,
    transition: str | None = None,
    plugins: PluginCatalog | None = None,
    parse_cache: ParseCache | None = None,
    drill_answers: DrillAnswers | None = None,
    crd_scans: CrdScans | None = None,
    tree: ReadOnceTree | None = None,
) -> tuple[list[Finding], int]:
    """Findings for the repository at `path`, and how many Applications were checked.
    With `parse_cache`, a file whose bytes were parsed before is not parsed again; with
    `drill_answers`, a Rollout (or a plan) drilled before is not drilled again; with
    `crd_scans`, a base commit scanned for CRDs before is not read whole again.

    The cyclic collector stays off for the whole run: what a check builds is acyclic and
    alive until the run ends, so each collection only rescanned it (a third of the CPU of a
    check of 1,000 Applications, most of it when a paused block ended and the collector met
    millions of young objects); it resumes once the loaded repository is freed."""
    _require_directory(path)
    from headway.model.yamlload import paused_gc

    with paused_gc():
        return _run_check(
            path,
            revision=revision,
            config_file=config_file,
            transition=transition,
            plugins=plugins,
            parse_cache=parse_cache,
            drill_answers=drill_answers,
            crd_scans=crd_scans,
            tree=tree,
        )


def _require_directory(path: Path) -> None:
    """Said before the plugin loader, the YAML reader, the loader and the rules load."""
    if not path.is_dir():
        raise UsageError(f"{path} is not a directory")


def _run_check(
    path: Path,
    *,
    revision: str | None,
    config_file: Path | None,
    transition: str | None,
    plugins: PluginCatalog | None,
    parse_cache: ParseCache | None,
    drill_answers: DrillAnswers | None,
    crd_scans: CrdScans | None,
    tree: ReadOnceTree | None,
) -> tuple[list[Finding], int]:
    from headway.check.registry import run_checks

    config, config_dir = load_config(path, config_file)
    loader, repo = build_loader(
        path,
        revision=revision,
        config=config,
        config_dir=config_dir,
        plugins=plugins,
        parse_cache=parse_cache,
        drill_answers=drill_answers,
        tree=tree,
    )
    if repo is not None and transition is None:
        base = _base_commit(repo, revision)
        if base is not None:
            base_tree = _tree_at_or_none(repo, base, _subpath(repo, path))
            loader.base_crds = _base_crds(base_tree, crd_scans)
    extra: list[Finding] = []
    if transition is not None:
        if repo is None:
            raise UsageError(f"--transition needs a Git repository, and {path} is not in one")
        from headway.cli.check_transition import TransitionError, transition_findings

        try:
            extra, loader.base_crds = transition_findings(
                repo, transition, sub=_subpath(repo, path), make_loader=loader.with_tree
            )
        except TransitionError as err:
            raise UsageError(str(err)) from None
    context = loader.load()
    findings = run_checks(context, disabled=config.disable)
    findings.extend(f for f in extra if f.rule not in config.disable)
    quick_exit.keep_until_exit(context, loader)  # as the program: not freed one by one
    return findings, len(context.applications)


def _base_crds(base_tree: GitTree | None, crd_scans: CrdScans | None) -> tuple[Document, ...]:
    from headway.cli.check_loader import collect_crds

    if base_tree is None:
        return ()
    candidates = None if crd_scans is None else crd_scans.candidates(base_tree)
    return collect_crds(base_tree, candidates=candidates)


def _tree_at_or_none(repo: pygit2.Repository, commit: pygit2.Commit, sub: str) -> GitTree | None:
    try:
        return _tree_at(repo, commit, sub, str(commit.id)[:12])
    except UsageError:
        return None


def exit_status(findings: list[Finding], *, strict: bool) -> int:
    failing = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
    return EXIT_FINDINGS if any(f.severity in failing for f in findings) else EXIT_OK


def check(  # noqa: PLR0917 (typer maps each parameter to an option)
    path: Annotated[Path, typer.Argument(help="Repository checkout to check.")] = Path("."),
    revision: Annotated[
        str | None, typer.Option("--revision", help="Check this commit (via Git), not the files.")
    ] = None,
    output: Annotated[
        OutputFormat, typer.Option("--format", "-o", help="text, json or sarif.")
    ] = OutputFormat.TEXT,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too.")] = False,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config", help="Config file (default: .headway/check.yaml, else headway-check.yaml)."
        ),
    ] = None,
    transition: Annotated[
        str | None,
        typer.Option("--transition", help="BASE..HEAD: also check the states between them."),
    ] = None,
    plugins_dir: PluginsDirOption = None,
    plugin_timeout: PluginTimeoutOption = DEFAULT_PLUGIN_TIMEOUT_SECONDS,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Parse every file, drill every Rollout and scan the base commit for CRDs "
            "again: read and write none of the caches (~/.cache/headway/check, or under "
            "$XDG_CACHE_HOME).",
        ),
    ] = False,
) -> None:
    """Check a GitOps repository for the traps that cause outages, with no cluster."""
    program = quick_exit.one_shot()  # as the `headway` program: no collection, no teardown
    try:
        _require_directory(path)
        plugins = load_catalog(plugins_dir, timeout_seconds=plugin_timeout)
        caches = None if no_cache else _open_caches(path)
        parse_cache, drill_answers, crd_scans = caches or (None, None, None)
        tree = None
        if program and parse_cache is not None and revision is None and transition is None:
            tree = _tree_parsed_ahead(path, parse_cache, drill_answers, config_file)
        findings, apps = run_check(
            path,
            revision=revision,
            config_file=config_file,
            transition=transition,
            plugins=plugins,
            parse_cache=parse_cache,
            drill_answers=drill_answers,
            crd_scans=crd_scans,
            tree=tree,
        )
        for cache in caches or ():
            cache.save()
    except UsageError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    from headway.check.registry import ALL_RULES
    from headway.cli.check_report import render_json, render_sarif, text_lines

    if output is OutputFormat.JSON:
        typer.echo(render_json(findings))
    elif output is OutputFormat.SARIF:
        typer.echo(render_sarif(findings, ALL_RULES))
    else:
        from headway.cli.text_lines import print_lines

        print_lines(text_lines(findings, apps))
    raise typer.Exit(exit_status(findings, strict=strict))


def _tree_parsed_ahead(
    path: Path, parse_cache: ParseCache, drill_answers: DrillAnswers | None, config: Path | None
) -> ReadOnceTree:
    """The checkout's tree, with a first run's files parsed, validated and drilled on a
    second core from now (`check_prefetch`: only as the program, where nothing else runs in
    the process)."""
    from headway.cli.check_prefetch import prefetch_parses
    from headway.cli.check_tree import ReadOnceTree
    from headway.source.tree import FilesystemTree

    tree = ReadOnceTree(FilesystemTree(path))
    prefetch_parses(
        tree, parse_cache, drill_answers, drill_settings=lambda: _drill_settings_only(path, config)
    )
    return tree


def _open_caches(path: Path) -> tuple[ParseCache, DrillAnswers, CrdScans]:
    from headway.cli.check_crd_scans import open_scans
    from headway.cli.check_drill_cache import open_answers
    from headway.cli.check_parse_cache import open_cache

    return open_cache(path), open_answers(path), open_scans(path)


def register(app: typer.Typer) -> None:
    app.command("check")(check)
