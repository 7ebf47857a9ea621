"""GitRepository against real repositories over file://: fetch, resolve, read, commit, push."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from headway.source.errors import (
    AuthenticationFailed,
    PathNotFound,
    PushRejected,
    RemoteUnreachable,
    SourceError,
    UnknownRevision,
)
from headway.source.git import BotIdentity, GitCache, GitCredentials, GitRepository
from headway.source.tree import EscapingLink
from source.gitrepos import Upstream, make_upstream


def test_fetch_clones_into_a_bare_cache_dir_per_url(
    cache: GitCache, upstream: Upstream, tmp_path: Path
) -> None:
    repo = cache.repository(upstream.url)
    repo.fetch()
    assert repo.repo.is_bare
    assert repo.path.parent == tmp_path / "cache"
    assert cache.repository(upstream.url) is repo
    assert cache.repository(upstream.url.removesuffix(".git") + "/") is repo
    other = make_upstream(tmp_path / "other.git", {"a.yaml": "x"})
    assert cache.repository(other.url).path != repo.path
    assert repo.resolve("main") == upstream.tip("main")


def test_cache_survives_reopening(cache: GitCache, upstream: Upstream, tmp_path: Path) -> None:
    cache.repository(upstream.url).fetch()
    again = GitCache(tmp_path / "cache").repository(upstream.url)
    assert again.resolve("HEAD") == upstream.tip("main")


def test_fetch_brings_new_commits_branches_and_tags(
    fetched: GitRepository, upstream: Upstream
) -> None:
    second = upstream.commit("main", {"apps/checkout/rollout.yaml": "kind: Rollout\n# v2\n"})
    upstream.commit("feature/x", {"new.yaml": "a: 1"})
    upstream.tag("v1.0.0", second)
    with pytest.raises(UnknownRevision):
        fetched.resolve("feature/x")
    fetched.fetch()
    assert fetched.resolve("main") == second
    assert fetched.resolve("v1.0.0") == second
    assert fetched.resolve("feature/x") == upstream.tip("feature/x")


@pytest.mark.parametrize(
    "form",
    ["HEAD", "", "main", "refs/heads/main", "origin/main", "refs/remotes/origin/main"],
)
def test_branch_and_head_forms(fetched: GitRepository, upstream: Upstream, form: str) -> None:
    assert fetched.resolve(form) == upstream.tip("main")


def test_head_follows_the_remote_default_branch(cache: GitCache, tmp_path: Path) -> None:
    up = make_upstream(tmp_path / "trunk.git", {"a.yaml": "x"}, branch="trunk")
    up.commit("main", {"b.yaml": "y"})
    repo = cache.repository(up.url)
    repo.fetch()
    assert repo.resolve("HEAD") == up.tip("trunk")


def test_sha_forms(fetched: GitRepository, upstream: Upstream) -> None:
    first = upstream.tip("main")
    upstream.commit("main", {"x.yaml": "1"})
    fetched.fetch()
    assert fetched.resolve(first) == first
    assert fetched.resolve(first[:7]) == first
    assert fetched.resolve(first.upper()) == first


def test_tags_lightweight_annotated_and_semver_ranges(
    fetched: GitRepository, upstream: Upstream
) -> None:
    shas = {}
    for version in ("1.2.0", "1.2.7", "1.3.0", "2.0.0-rc.1"):
        shas[version] = upstream.commit("main", {"version.txt": version}, version)
    upstream.tag("v1.2.0", shas["1.2.0"])
    upstream.tag("v1.2.7", shas["1.2.7"], annotated=True)
    upstream.tag("v1.3.0", shas["1.3.0"])
    upstream.tag("v2.0.0-rc.1", shas["2.0.0-rc.1"])
    fetched.fetch()
    assert fetched.resolve("v1.2.7") == shas["1.2.7"]
    assert fetched.resolve("refs/tags/v1.2.0") == shas["1.2.0"]
    assert fetched.resolve("1.2.*") == shas["1.2.7"]
    assert fetched.resolve("~1.2") == shas["1.2.7"]
    assert fetched.resolve(">=1.0.0 <2.0.0") == shas["1.3.0"]
    assert fetched.resolve("^1") == shas["1.3.0"]
    assert fetched.resolve(">=2.0.0-rc.0") == shas["2.0.0-rc.1"]


def test_branch_wins_over_tag_of_the_same_name(fetched: GitRepository, upstream: Upstream) -> None:
    old = upstream.tip("main")
    upstream.commit("release", {"r.yaml": "1"})
    upstream.tag("release", old)
    fetched.fetch()
    assert fetched.resolve("release") == upstream.tip("release")
    assert fetched.resolve("refs/tags/release") == old


@pytest.mark.parametrize("revision", ["nope", "v9.9.9", "deadbee", "0" * 40, ">=5.0.0"])
def test_unknown_revisions(fetched: GitRepository, revision: str) -> None:
    with pytest.raises(UnknownRevision, match="unknown revision"):
        fetched.resolve(revision)


def test_read_tree_without_working_tree(fetched: GitRepository, upstream: Upstream) -> None:
    sha = upstream.commit("main", {"apps/checkout/sub/svc.yaml": "kind: Service\n"})
    fetched.fetch()
    tree = fetched.tree(sha)
    assert tree.files("apps/checkout") == [
        "apps/checkout/rollout.yaml",
        "apps/checkout/sub/svc.yaml",
    ]
    assert tree.read("apps/checkout/sub/svc.yaml") == b"kind: Service\n"
    assert tree.kind("apps") == "dir" and tree.kind("README.md") == "file"
    assert tree.kind("missing") is None
    with pytest.raises(PathNotFound, match=r"apps/none\.yaml"):
        tree.read("apps/none.yaml")
    with pytest.raises(PathNotFound):
        tree.files("nowhere")


def test_tree_id_changes_only_with_the_path_content(
    fetched: GitRepository, upstream: Upstream
) -> None:
    first = fetched.tree_id("main", "apps/checkout")
    upstream.commit("main", {"README.md": "# changed\n"})
    fetched.fetch()
    assert fetched.tree_id("main", "apps/checkout") == first
    upstream.commit("main", {"apps/checkout/rollout.yaml": "kind: Rollout\n# 2\n"})
    fetched.fetch()
    assert fetched.tree_id("main", "apps/checkout") != first
    with pytest.raises(PathNotFound):
        fetched.tree_id("main", "apps/payments")


def test_commit_edits_and_push(fetched: GitRepository, upstream: Upstream) -> None:
    bot = BotIdentity(name="Promoter", email="promoter@example.com")
    result = fetched.commit_edits(
        branch="main",
        edits={"apps/checkout/values.yaml": b"image:\n  tag: abc123\n", "README.md": None},
        message="promote checkout to abc123",
        identity=bot,
    )
    assert result.created
    assert upstream.tip("main") != result.sha  # nothing leaves until push
    fetched.push("main")
    assert upstream.tip("main") == result.sha
    commit = upstream.repo[result.sha]
    assert isinstance(commit, pygit2.Commit)
    assert (commit.author.name, commit.author.email) == ("Promoter", "promoter@example.com")
    assert commit.committer.email == "promoter@example.com"
    assert upstream.read("main", "apps/checkout/values.yaml") == b"image:\n  tag: abc123\n"
    assert "README.md" not in commit.tree
    assert fetched.resolve("main") == result.sha


def test_commit_with_no_change_creates_nothing(fetched: GitRepository, upstream: Upstream) -> None:
    result = fetched.commit_edits(branch="main", edits={"README.md": b"# infra\n"}, message="noop")
    assert not result.created and result.sha == upstream.tip("main")


def test_commit_errors(fetched: GitRepository) -> None:
    with pytest.raises(PathNotFound, match=r"gone\.yaml"):
        fetched.commit_edits(branch="main", edits={"gone.yaml": None}, message="rm")
    with pytest.raises(UnknownRevision, match="no such branch"):
        fetched.commit_edits(branch="nope", edits={"a": b"1"}, message="x")
    with pytest.raises(PathNotFound, match="leaves the repository"):
        fetched.commit_edits(branch="main", edits={"../evil": b"1"}, message="x")


def test_new_branch_from_base_and_push(fetched: GitRepository, upstream: Upstream) -> None:
    result = fetched.commit_edits(
        branch="promote/prod", edits={"p.yaml": b"1"}, message="p", base="main"
    )
    fetched.push("promote/prod")
    assert upstream.tip("promote/prod") == result.sha


def test_push_rejected_when_the_remote_moved(fetched: GitRepository, upstream: Upstream) -> None:
    fetched.commit_edits(branch="main", edits={"a.yaml": b"mine"}, message="mine")
    theirs = upstream.commit("main", {"b.yaml": "theirs"})
    fetched.fetch()  # the cache learns the remote moved; the local commit is now behind it
    with pytest.raises(PushRejected, match="rejected"):
        fetched.push("main")
    assert upstream.tip("main") == theirs
    redo = fetched.commit_edits(branch="main", edits={"a.yaml": b"mine"}, message="mine")
    fetched.push("main")
    assert upstream.tip("main") == redo.sha


def test_push_rejected_without_fetch(fetched: GitRepository, upstream: Upstream) -> None:
    fetched.commit_edits(branch="main", edits={"a.yaml": b"mine"}, message="mine")
    upstream.commit("main", {"b.yaml": "theirs"})
    with pytest.raises(PushRejected):
        fetched.push("main")


def test_revert_onto_the_current_tip(fetched: GitRepository, upstream: Upstream) -> None:
    bump = upstream.commit("main", {"apps/checkout/values.yaml": "tag: bad\n"}, "bump checkout")
    upstream.commit("main", {"apps/payments/values.yaml": "tag: p2\n"}, "bump payments")
    fetched.fetch()
    result = fetched.revert(commit=bump, branch="main")
    fetched.push("main")
    commit = upstream.repo[result.sha]
    assert isinstance(commit, pygit2.Commit)
    assert commit.message.startswith('Revert "bump checkout"')
    assert bump in commit.message
    assert "apps/checkout/values.yaml" not in commit.tree
    assert upstream.read("main", "apps/payments/values.yaml") == b"tag: p2\n"


def test_revert_conflict_reports_paths_and_touches_nothing(
    fetched: GitRepository, upstream: Upstream
) -> None:
    upstream.commit("main", {"values.yaml": "tag: a\nreplicas: 3\n"})
    bump = upstream.commit("main", {"values.yaml": "tag: b\nreplicas: 3\n"}, "bump")
    tip = upstream.commit("main", {"values.yaml": "tag: c\nreplicas: 3\n"}, "bump again")
    fetched.fetch()
    refs_before = {
        name: str(fetched.repo.references[name].target) for name in fetched.repo.references
    }
    with pytest.raises(SourceError, match=r"conflicts in values\.yaml") as info:
        fetched.revert(commit=bump, branch="main")
    assert getattr(info.value, "paths", ()) == ("values.yaml",)
    refs_after = {
        name: str(fetched.repo.references[name].target) for name in fetched.repo.references
    }
    assert refs_after == refs_before
    assert upstream.tip("main") == tip


def test_unreachable_file_remote(cache: GitCache, tmp_path: Path) -> None:
    repo = cache.repository((tmp_path / "missing.git").as_uri())
    with pytest.raises(RemoteUnreachable, match=r"missing\.git"):
        repo.fetch()


@pytest.mark.parametrize("scheme", ["https", "http", "ssh"])
def test_unreachable_network_remotes(cache: GitCache, scheme: str) -> None:
    # Port 9 on loopback: nothing listens, so the connection is refused at once.
    url = f"{scheme}://git@127.0.0.1:9/org/infra.git"
    with pytest.raises(RemoteUnreachable, match=r"127\.0\.0\.1:9"):
        cache.repository(url).fetch()


class _AuthServer:
    """An HTTP server that refuses every request with 401 and records Authorization headers."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        seen: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.headers.get("Authorization", ""))
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.seen = seen
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/org/infra.git"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def auth_server() -> Iterator[_AuthServer]:
    server = _AuthServer()
    yield server
    server.close()


def test_https_credentials_are_sent_and_refusal_is_clear(
    cache: GitCache, auth_server: _AuthServer
) -> None:
    import base64

    creds = GitCredentials(username="bot", password="s3cret-token")
    repo = cache.repository(auth_server.url, credentials=creds)
    with pytest.raises(AuthenticationFailed, match="refused the configured credentials"):
        repo.fetch()
    expected = "Basic " + base64.b64encode(b"bot:s3cret-token").decode()
    assert expected in auth_server.seen


def test_credentials_missing_is_clear(cache: GitCache, auth_server: _AuthServer) -> None:
    with pytest.raises(AuthenticationFailed, match="none are configured"):
        cache.repository(auth_server.url).fetch()


def test_ssh_credentials_wiring(tmp_path: Path) -> None:
    from pygit2.enums import CredentialType

    from headway.source.git import _Callbacks

    key = tmp_path / "id_ed25519"
    creds = GitCredentials(ssh_private_key=key, ssh_public_key=key.with_suffix(".pub"))
    keypair = _Callbacks(creds).credentials("ssh://git@h/r.git", "git", CredentialType.SSH_KEY)
    assert isinstance(keypair, pygit2.Keypair)
    assert keypair.credential_tuple == ("git", str(key.with_suffix(".pub")), str(key), "")
    agent = _Callbacks(GitCredentials(use_ssh_agent=True)).credentials(
        "ssh://h/r.git", None, CredentialType.SSH_KEY
    )
    assert isinstance(agent, pygit2.KeypairFromAgent)
    with pytest.raises(Exception, match="no configured credential fits"):
        _Callbacks(GitCredentials(password="x")).credentials(
            "ssh://h/r.git", "git", CredentialType.SSH_KEY
        )


def test_fetch_prunes_branches_deleted_upstream(fetched: GitRepository, upstream: Upstream) -> None:
    upstream.commit("feature/y", {"y.yaml": "1"})
    fetched.fetch()
    assert fetched.resolve("feature/y") == upstream.tip("feature/y")
    upstream.repo.references.delete("refs/heads/feature/y")
    fetched.fetch()
    with pytest.raises(UnknownRevision):
        fetched.resolve("feature/y")


def test_symlinks_are_followed_inside_the_repository_only(
    fetched: GitRepository, upstream: Upstream, tmp_path: Path
) -> None:
    link = pygit2.enums.FileMode.LINK
    repo = upstream.repo
    tip = repo.references["refs/heads/main"].peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(tip.tree)
    index.add(
        pygit2.IndexEntry("apps/web/r.yaml", repo.create_blob(b"../checkout/rollout.yaml"), link)
    )
    index.add(
        pygit2.IndexEntry("apps/web/evil.yaml", repo.create_blob(b"../../../etc/passwd"), link)
    )
    sig = pygit2.Signature("Dev", "dev@example.com")
    repo.create_commit("refs/heads/main", sig, sig, "links", index.write_tree(repo), [tip.id])
    fetched.fetch()
    tree = fetched.tree("main")
    assert tree.read("apps/web/r.yaml") == b"kind: Rollout\n"
    with pytest.raises(PathNotFound, match=r"symlink to \.\./\.\./\.\./etc/passwd, which leaves"):
        tree.read("apps/web/evil.yaml")
    left_out = tree.materialize(tmp_path / "out", "apps/web")
    assert left_out == (EscapingLink("apps/web/evil.yaml", "../../../etc/passwd"),)
    assert not (tmp_path / "out/apps/web/evil.yaml").exists()
    # (what the link leads to is outside apps/web, so it is written in the link's place: a
    # link there would lead to nothing)
    assert (tmp_path / "out/apps/web/r.yaml").read_bytes() == b"kind: Rollout\n"


def test_fetch_missing_pull_request_refs_and_unreachable_shas(
    fetched: GitRepository, upstream: Upstream
) -> None:
    repo = upstream.repo
    sig = pygit2.Signature("Dev", "dev@example.com")
    base = repo.references["refs/heads/main"].target
    tree = repo[base].peel(pygit2.Commit).tree.id
    pr = str(repo.create_commit("refs/pull/42/head", sig, sig, "pr", tree, [base]))
    loose = str(repo.create_commit("refs/keep/x", sig, sig, "kept", tree, [base]))
    fetched.fetch()
    with pytest.raises(UnknownRevision):
        fetched.resolve("refs/pull/42/head")
    with pytest.raises(UnknownRevision, match="not fetched"):
        fetched.resolve(loose)
    assert fetched.resolve("refs/pull/42/head", fetch_missing=True) == pr
    assert fetched.resolve(loose, fetch_missing=True) == loose
    with pytest.raises(UnknownRevision):
        fetched.resolve("refs/pull/99/head", fetch_missing=True)
