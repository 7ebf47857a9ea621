"""`headway diff BASE..HEAD` on a 1,000-Application repository, against rendering it once.

Builds the repository of bench_check.py (1,000 Applications, each a directory source with a
Rollout, two Services, an AnalysisTemplate and an HPA) as a real Git repository, commits a
change to CHANGED of the Applications (a new image), and measures in this run (best of RUNS):

  render once  the loader over HEAD: find every Application and render it (the floor: what
               any tool must do to know what one revision deploys)
  check once   render once plus every `headway check` rule
  diff         `headway diff HEAD~1..HEAD` without printing: both revisions loaded with one
               render memo, the affected Applications compared and planned, the checks run
               on both revisions

and prints each and the ratio diff / render once.

    .venv/bin/python bench/bench_diff.py [--apps 1000] [--changed 10]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pygit2

import bench_check
from bench_check import URL, generate
from headway.check.registry import run_checks
from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.cli.diff_load import load_review, parse_range
from headway.source.tree import GitTree

RUNS = 3


def _commit(repo: pygit2.Repository, message: str) -> None:
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    who = pygit2.Signature("bench", "bench@headway.invalid", 1_700_000_000, 0)
    parents = [] if repo.head_is_unborn else [repo.head.target]
    repo.create_commit("HEAD", who, who, message, tree, parents)


def build(root: Path, *, changed: int) -> pygit2.Repository:
    generate(root)
    repo = pygit2.init_repository(str(root), initial_head="main")
    repo.remotes.create("origin", URL)
    _commit(repo, "fleet")
    for i in range(changed):
        rollout = root / "services" / f"svc-{i}" / "rollout.yaml"
        rollout.write_text(rollout.read_text().replace(f":1.{i}.0", f":2.{i}.0"))
    _commit(repo, f"new image for {changed} services")
    return repo


def best(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--changed", type=int, default=10)
    args = parser.parse_args()
    bench_check.APPS = args.apps
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = build(root, changed=args.changed)
        head = repo.head.peel(pygit2.Commit)

        def loader() -> RepositoryLoader:
            tree = GitTree(repo, head.tree, "bench@HEAD")
            return RepositoryLoader(tree=tree, self_urls=frozenset({normalize_url(URL)}))

        render = best(lambda: loader().load())
        check = best(lambda: run_checks(loader().load()))
        review = load_review(root, parse_range("HEAD~1..HEAD"))
        diff = best(lambda: load_review(root, parse_range("HEAD~1..HEAD")))
    print(f"{args.apps} Applications, {args.changed} changed; best of {RUNS}")
    print(f"  render once  {render:7.2f} s")
    print(f"  check once   {check:7.2f} s")
    print(f"  diff         {diff:7.2f} s   ({len(review.apps)} affected)")
    print(f"  diff / render once: {diff / render:.2f}")


if __name__ == "__main__":
    main()
