"""Write the revert of a failed release's image change to Git (one commit per changed image).

For each image the failed revision changed: search each repository the Application reads for
the commit that set it (`find_image_change`); if a later commit already carries
`Headway-Revert-Of: <that commit>`, it was done before (a restarted controller must not do it
again); otherwise put back, at the tip, only the values that commit changed, and publish. A
branch that moves while this happens is re-read and the revert built again, `attempts` times.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from headway.controllers.convergence.facts import FailedRelease, ImageSwap, describe_failure
from headway.controllers.convergence.git import BranchMoved, BranchWriter
from headway.source.errors import PushRejected, SourceError, UnknownRevision
from headway.source.image_history import (
    REVERT_TRAILER,
    ImageChange,
    ImageRevertRefused,
    find_image_change,
    find_revert_of,
    image_revert_edits,
)
from headway.source.image_scope import RepoScope

__all__ = ["OpenBranch", "RevertOutcome", "RevertResult", "revert_message", "revert_release"]

OpenBranch = Callable[[str, str], BranchWriter]
"""(repoURL, targetRevision) -> the branch to write to."""


class RevertResult(StrEnum):
    REVERTED = "Reverted"
    ALREADY_REVERTED = "AlreadyReverted"
    REFUSED = "Refused"  # cannot be done; a person has to look
    RETRY = "Retry"  # a remote could not be reached or kept moving: try again later


@dataclass(frozen=True)
class RevertOutcome:
    result: RevertResult
    message: str
    commits: tuple[str, ...] = ()  # the revert commits (new or found)
    revert_of: tuple[str, ...] = ()  # the commits whose image change they take back


def revert_message(release: FailedRelease, swap: ImageSwap, change: ImageChange) -> str:
    """The revert commit's message: what failed, where, why, and the trailers."""
    lines = [
        f"Revert {release.rollout} to {swap.stable}: {swap.failed} failed its canary",
        "",
        f"Headway aborted Rollout {release.namespace}/{release.rollout}: revision "
        f"{swap.failed} (pod-template hash {release.pod_hash}, container {swap.container}).",
        *describe_failure(release),
        "",
        f"This takes back only the image change of {change.commit[:12]} "
        f'("{change.subject}") in {change.file};',
        "any other change of that commit stays.",
        "",
        f"{REVERT_TRAILER}: {change.commit}",
        f"Headway-Rollout: {release.namespace}/{release.rollout}",
        f"Headway-Pod-Hash: {release.pod_hash}",
    ]
    return "\n".join(lines) + "\n"


def _revert_in(
    writer: BranchWriter, scope: RepoScope, release: FailedRelease, swap: ImageSwap
) -> RevertOutcome | None:
    """One attempt in one repository; None when the image is not in its history."""
    tip = writer.refresh()
    change = find_image_change(writer.repo, tip=tip, scope=scope.scope, image=swap.failed)
    if change is None:
        return None
    done = find_revert_of(writer.repo, tip=tip, commit=change.commit)
    if done is not None:
        return RevertOutcome(
            RevertResult.ALREADY_REVERTED,
            f"{change.commit[:12]} was already reverted by {done[:12]}",
            (done,),
            (change.commit,),
        )
    try:
        edits = image_revert_edits(writer.repo, tip=tip, change=change, image=swap.failed)
    except ImageRevertRefused as err:
        return RevertOutcome(RevertResult.REFUSED, f"cannot revert {change.commit[:12]}: {err}")
    sha = writer.write(parent=tip, edits=edits, message=revert_message(release, swap, change))
    where = f"{scope.repo_url} {writer.branch}"
    return RevertOutcome(
        RevertResult.REVERTED,
        f"committed {sha[:12]} to {where}: {change.file} back to {swap.stable} "
        f"(reverting the image change of {change.commit[:12]})",
        (sha,),
        (change.commit,),
    )


def _revert_swap(
    release: FailedRelease,
    swap: ImageSwap,
    *,
    scopes: Sequence[RepoScope],
    open_branch: OpenBranch,
    attempts: int,
) -> RevertOutcome:
    for scope in scopes:
        writer = open_branch(scope.repo_url, scope.target_revision)
        moved = ""
        for _ in range(attempts):
            try:
                outcome = _revert_in(writer, scope, release, swap)
            except (BranchMoved, PushRejected) as err:
                moved = str(err)
                continue
            if outcome is not None:
                return outcome
            break
        else:
            return RevertOutcome(
                RevertResult.RETRY,
                f"push rejected {attempts} times (the branch kept moving): {moved}",
            )
    searched = ", ".join(
        f"{s.repo_url} ({', '.join((*s.scope.directories, *s.scope.files)) or '/'})" for s in scopes
    )
    return RevertOutcome(
        RevertResult.REFUSED,
        f"image {swap.failed} was not found in the history of {searched or 'any source'}",
    )


def revert_release(
    release: FailedRelease,
    *,
    scopes: Sequence[RepoScope],
    open_branch: OpenBranch,
    attempts: int = 3,
) -> RevertOutcome:
    """Revert every image change of the failed release; the worst result wins."""
    outcomes: list[RevertOutcome] = []
    for swap in release.swaps:
        try:
            outcomes.append(
                _revert_swap(
                    release, swap, scopes=scopes, open_branch=open_branch, attempts=attempts
                )
            )
        except UnknownRevision as err:  # a tag or commit is tracked, or the branch is gone
            outcomes.append(RevertOutcome(RevertResult.REFUSED, str(err)))
        except SourceError as err:  # unreachable remote: worth another try later
            outcomes.append(RevertOutcome(RevertResult.RETRY, str(err)))
    if not outcomes:
        return RevertOutcome(RevertResult.REFUSED, "the failed revision changed no image")
    order = [
        RevertResult.REFUSED,
        RevertResult.RETRY,
        RevertResult.REVERTED,
        RevertResult.ALREADY_REVERTED,
    ]
    worst = min((o.result for o in outcomes), key=order.index)
    return RevertOutcome(
        worst,
        "; ".join(o.message for o in outcomes),
        tuple(c for o in outcomes for c in o.commits),
        tuple(c for o in outcomes for c in o.revert_of),
    )
