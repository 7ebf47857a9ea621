"""`KeptIdentities`: render identities kept per app, moved to a new commit a group (apps of the
same refs) at a time, with only the members whose paths the commit touched detached.

The tree diff is a table here (`Diffs`): the tests say which paths changed between two
commits, and count how often a diff was asked for."""

from __future__ import annotations

import pytest

from headway.controllers.app.kept_identities import IdentityKey, KeptIdentities, Refs

MAIN: Refs = (("https://git.example/repo.git", "main"),)
RELEASE: Refs = (("https://git.example/repo.git", "release"),)


class Diffs:
    def __init__(self) -> None:
        self.changed: dict[tuple[str, str], frozenset[str] | None] = {}
        self.asked: list[tuple[str, str]] = []

    def between(
        self, before: tuple[str, ...], resolved: object, after: tuple[str, ...]
    ) -> frozenset[str] | None:
        self.asked.append((before[0], after[0]))
        touched = self.changed[(before[0], after[0])]
        if touched is None:
            return None
        with_parents = set()
        for path in touched:
            source, _, rest = path.partition(":")
            while True:
                with_parents.add(f"{source}:{rest}")
                if not rest:
                    break
                rest = rest.rpartition("/")[0]
        return frozenset(with_parents)


def key(app: str) -> IdentityKey:
    return (app, "ns", "default", "[]")


def keep_all(
    kept: KeptIdentities[None], apps: dict[str, str], sha: str, refs: Refs = MAIN
) -> None:
    for app, path in apps.items():
        kept.keep(
            key(app),
            refs=refs,
            shas=(sha,),
            fingerprint=f"{app}@{sha}",
            bounded_to=frozenset({f"0:{path}"}),
            resolved=None,
        )


@pytest.fixture
def diffs() -> Diffs:
    return Diffs()


@pytest.fixture
def kept(diffs: Diffs) -> KeptIdentities[None]:
    return KeptIdentities(diffs.between)


FLEET = {f"app-{i}": f"apps/app-{i}" for i in range(50)}


def test_a_commit_detaches_only_the_apps_it_touched_with_one_diff(
    kept: KeptIdentities[None], diffs: Diffs
) -> None:
    keep_all(kept, FLEET, "a")
    diffs.changed[("a", "b")] = frozenset({"0:apps/app-7/all.yaml", "0:apps/app-9/x/y.yaml"})
    answers = {app: kept.fingerprint(key(app), ("b",), None) for app in FLEET}
    assert answers["app-7"] is None and answers["app-9"] is None
    assert all(answers[a] == f"{a}@a" for a in FLEET if a not in ("app-7", "app-9"))
    assert diffs.asked == [("a", "b")]
    assert (kept.moves, kept.detached) == (1, 2)
    # the detached ones compute again and join the group at the new commit
    keep_all(kept, {"app-7": FLEET["app-7"]}, "b")
    assert kept.fingerprint(key("app-7"), ("b",), None) == "app-7@b"
    assert kept.fingerprint(key("app-9"), ("b",), None) is None


def test_a_change_at_a_parent_directory_or_the_root_touches_the_apps_below(
    kept: KeptIdentities[None], diffs: Diffs
) -> None:
    keep_all(kept, {"deep": "apps/team/web", "root": "", "other": "other/x"}, "a")
    diffs.changed[("a", "b")] = frozenset({"0:apps/team/web"})  # a file replacing the directory
    assert kept.fingerprint(key("deep"), ("b",), None) is None
    assert kept.fingerprint(key("root"), ("b",), None) is None
    assert kept.fingerprint(key("other"), ("b",), None) == "other@a"


def test_a_member_reading_two_paths_is_detached_by_either(
    kept: KeptIdentities[None], diffs: Diffs
) -> None:
    two: Refs = (*MAIN, ("https://git.example/values.git", "main"))
    kept.keep(
        key("multi"),
        refs=two,
        shas=("a", "v1"),
        fingerprint="multi@a",
        bounded_to=frozenset({"0:apps/web", "1:values/web"}),
        resolved=None,
    )
    diffs.changed[("a", "a2")] = frozenset({"1:values/web/prod.yaml"})
    assert kept.fingerprint(key("multi"), ("a2", "v2"), None) is None
    assert kept.detached == 1


def test_apps_of_other_refs_move_on_their_own(kept: KeptIdentities[None], diffs: Diffs) -> None:
    keep_all(kept, {"on-main": "apps/web"}, "a")
    keep_all(kept, {"on-release": "apps/web"}, "a", refs=RELEASE)
    diffs.changed[("a", "b")] = frozenset({"0:apps/web/cm.yaml"})
    assert kept.fingerprint(key("on-main"), ("b",), None) is None  # main moved to b
    assert kept.fingerprint(key("on-release"), ("a",), None) == "on-release@a"  # release did not
    assert diffs.asked == [("a", "b")]


def test_commits_that_cannot_be_compared_make_every_member_compute_again(
    kept: KeptIdentities[None], diffs: Diffs
) -> None:
    keep_all(kept, FLEET, "a")
    diffs.changed[("a", "gone")] = None
    assert kept.fingerprint(key("app-1"), ("gone",), None) is None
    assert all(kept.fingerprint(key(a), ("gone",), None) is None for a in FLEET)
    assert diffs.asked == [("a", "gone")]  # the group was dropped once, not asked again per app


def test_an_identity_not_bounded_to_its_paths_is_never_carried(
    kept: KeptIdentities[None], diffs: Diffs
) -> None:
    kept.keep(
        key("helm"), refs=MAIN, shas=("a",), fingerprint="helm@a", bounded_to=None, resolved=None
    )
    assert kept.fingerprint(key("helm"), ("a",), None) == "helm@a"
    assert kept.fingerprint(key("helm"), ("b",), None) is None
    assert diffs.asked == []


def test_the_group_moves_back_and_forth_with_a_branch_reset(
    kept: KeptIdentities[None], diffs: Diffs
) -> None:
    keep_all(kept, {"web": "apps/web", "api": "apps/api"}, "a")
    diffs.changed[("a", "b")] = frozenset({"0:apps/web/cm.yaml"})
    diffs.changed[("b", "a")] = frozenset({"0:apps/web/cm.yaml"})
    assert kept.fingerprint(key("api"), ("b",), None) == "api@a"
    assert kept.fingerprint(key("api"), ("a",), None) == "api@a"
    assert kept.fingerprint(key("web"), ("a",), None) is None  # detached on the way to b


def test_keeping_again_replaces_the_record_and_its_paths(
    kept: KeptIdentities[None], diffs: Diffs
) -> None:
    keep_all(kept, {"web": "apps/old"}, "a")
    keep_all(kept, {"web": "apps/new"}, "a")  # the app's path changed: a new identity
    diffs.changed[("a", "b")] = frozenset({"0:apps/old/cm.yaml"})
    assert kept.fingerprint(key("web"), ("b",), None) == "web@a"
    assert kept.detached == 0


def test_forget_lets_go_of_the_chosen_apps(kept: KeptIdentities[None]) -> None:
    keep_all(kept, {"web": "apps/web", "api": "apps/api"}, "a")
    kept.forget(lambda k: k[0] != "web")
    assert kept.fingerprint(key("web"), ("a",), None) is None
    assert kept.fingerprint(key("api"), ("a",), None) == "api@a"


def test_past_its_size_every_identity_is_let_go(diffs: Diffs) -> None:
    small: KeptIdentities[None] = KeptIdentities(diffs.between, max_entries=3)
    keep_all(small, {"a1": "p1", "a2": "p2", "a3": "p3"}, "a")
    keep_all(small, {"a4": "p4"}, "a")
    assert [small.fingerprint(key(a), ("a",), None) for a in ("a1", "a4")] == [None, "a4@a"]
