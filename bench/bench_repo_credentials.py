"""What does asking for a repository's credentials cost on every fetch and render?

`headway serve` gives its Git cache a provider that lists the Argo CD repository Secrets from
the store on every `GitCache.repository(url)` call (parsing them again only when a
resourceVersion changed). The store is the local runtime's SQLite file with 20 repository /
repo-creds Secrets and 2,000 other Secrets in the `argocd` namespace.

  baseline     `cluster.get` of one Secret by name (the cheapest store read)
  provider     the provider's answer for a URL, nothing changed since the last call
  changed      the same after one Secret's resourceVersion moved (list + parse again)

The claim: the unchanged provider call costs a few store reads, not a parse.

Run: .venv/bin/python bench/bench_repo_credentials.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from _timing import per_call_us
from headway.clock import SystemClock
from headway.cluster.local import LocalCluster
from headway.controllers.repo_credentials import RepoCredentialsProvider


def _secret(name: str, kind: str | None, url: str) -> dict[str, object]:
    labels = {"argocd.argoproj.io/secret-type": kind} if kind else {"app": "other"}
    meta = {"name": name, "namespace": "argocd", "labels": labels}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta,
        "stringData": {"url": url, "username": "bot", "password": f"token-{name}"},
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, LocalCluster(Path(tmp) / "db", SystemClock()) as c:
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}
        c.apply(ns, field_manager="bench")
        for i in range(10):
            c.apply(_secret(f"repo-{i}", "repository", f"https://h/org/r{i}"), field_manager="b")
            c.apply(_secret(f"tmpl-{i}", "repo-creds", f"https://h/t{i}"), field_manager="b")
        for i in range(2000):
            c.apply(_secret(f"other-{i}", None, "x"), field_manager="b")
        provider = RepoCredentialsProvider(c, report=lambda line: None)
        assert provider("https://h/org/r3.git") is not None
        base = per_call_us(lambda: c.get("v1", "Secret", "repo-3", "argocd"), 1.0)
        warm = per_call_us(lambda: provider("https://h/t7/app"), 1.0)
        flip = [0]

        def changed() -> object:
            flip[0] += 1
            c.apply(_secret("repo-0", "repository", f"https://h/org/v{flip[0]}"), field_manager="b")
            return provider("https://h/t7/app")

        moved = per_call_us(changed, 1.0)
        print(f"baseline get        {base:9.1f} us")
        print(f"provider unchanged  {warm:9.1f} us  ({warm / base:.1f}x baseline)")
        print(f"apply + re-parse    {moved:9.1f} us  ({moved / base:.1f}x baseline)")


if __name__ == "__main__":
    main()
