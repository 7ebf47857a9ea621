"""The repository edge of one environment: read what its file pins, commit a promotion, find
that commit again after a restart, re-commit the previous image on failure.

Commits go through the branch writers Git convergence already uses (`open_branch`: a local
repository committed in place, or a remote fetched, committed and pushed); the file edit is
`image_targets.promotion_edit`, so only the image key (and the hotfix keys) change. A commit
carries `Headway-Promotion: <promotion>`; a re-commit of the previous image also carries
`Headway-Revert-Of: <commit>`, the trailer Git convergence looks for, so the two never take
the same commit back twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pygit2

from headway.controllers.convergence.git import BranchMoved, BranchWriter
from headway.model.promotion_pipeline import Environment
from headway.promotion import trailers
from headway.promotion.facts import FileChangedUnderGate
from headway.promotion.image_targets import promotion_edit, read_image
from headway.promotion.record import PromotionSpec
from headway.source.errors import PushRejected, SourceError
from headway.source.image_history import REVERT_TRAILER, find_revert_of

__all__ = ["PROMOTION_TRAILER", "GitEnvironment", "promotion_message"]

PROMOTION_TRAILER = trailers.PROMOTION
_HISTORY_LIMIT = 1000
_ATTEMPTS = 3

ConfigCheck = Callable[[str, str], str]
"""(text at the last promotion, text about to be committed) -> why it is config, or ""."""


def promotion_message(
    spec: PromotionSpec, env: Environment, *, previous: str, image: str, revert_of: str = ""
) -> str:
    """A structured commit message: a subject `git log --oneline` reads, then trailers."""
    if revert_of:
        subject = f"promote {spec.pipeline} {env.name}: back to {image} ({spec.image} failed)"
    else:
        subject = f"promote {spec.pipeline} {env.name}: {image}"
    lines = [
        subject,
        "",
        f"{env.target.file}: {previous or 'unset'} -> {image}",
        "",
        trailers.line(PROMOTION_TRAILER, spec.name),
        trailers.line("Headway-Pipeline", spec.pipeline),
        trailers.line("Headway-Environment", env.name),
        trailers.line("Headway-Image", image),
        trailers.line("Headway-Previous-Image", previous),
        trailers.line("Headway-Requested-By", spec.author),
    ]
    if spec.break_glass is not None:
        glass = f"{spec.break_glass.by}: {spec.break_glass.reason}"
        lines.append(trailers.line("Headway-Break-Glass", glass))
    if spec.hotfix_reason and not revert_of:
        hotfix = f"{spec.hotfix_reason} (nonce {spec.hotfix_nonce})"
        lines.append(trailers.line("Headway-Hotfix", hotfix))
    if revert_of:
        lines.append(trailers.line(REVERT_TRAILER, revert_of))
    return "\n".join(lines) + "\n"


class GitEnvironment:
    def __init__(
        self,
        *,
        writer: BranchWriter,
        env: Environment,
        repository: str,
        config_check: ConfigCheck | None = None,
    ) -> None:
        self._writer = writer
        self._env = env
        self._repository = repository
        self._config_check = config_check
        self._file = env.target.file

    def _blob_at(self, commit: str) -> pygit2.Blob:
        tree = self._writer.repo[commit].peel(pygit2.Commit).tree
        try:
            blob = tree[self._file]
        except KeyError:
            raise SourceError(f"{self._file} is not in {commit[:12]}") from None
        if not isinstance(blob, pygit2.Blob):
            raise SourceError(f"{self._file} in {commit[:12]} is not a file")
        return blob

    def _text_at(self, commit: str) -> str:
        return self._blob_at(commit).data.decode("utf-8")

    def file_version(self) -> str:
        """The environment's file at the branch tip, as its Git blob id: equal ids are equal
        bytes, so an approval or a commit can be bound to the exact file that was judged."""
        return str(self._blob_at(self._writer.refresh()).id)

    def _history(self) -> Iterator[pygit2.Commit]:
        repo = self._writer.repo
        commit = repo[self._writer.refresh()].peel(pygit2.Commit)
        for _ in range(_HISTORY_LIMIT):
            yield commit
            if not commit.parents:
                return
            commit = commit.parents[0]

    def pinned(self) -> str:
        tip = self._writer.refresh()
        return read_image(
            self._text_at(tip), self._env.target, repository=self._repository, file=self._file
        )

    def find_commit(self, promotion: str) -> str:
        for commit in self._history():
            if trailers.promotion_of(commit.message or "") == promotion:
                return str(commit.id)
        return ""

    def find_revert(self, commit: str) -> str:
        tip = self._writer.refresh()
        return find_revert_of(self._writer.repo, tip=tip, commit=commit) or ""

    def exempt(self) -> bool:
        """The environment lets an image change alone skip its gate: its `gate.exempt` lists
        the image key (and a config check looks at everything else)."""
        exempted = {str(key) for key in self._env.exempt_keys}
        return self._config_check is not None and str(self._env.target.key) in exempted

    def config_change(self) -> str:
        if self._config_check is None:
            return ""
        tip = self._writer.refresh()
        last = self._last_promoted(tip)
        if not last:  # nothing known-good to compare with: fail closed where it would exempt
            return "no earlier promotion to compare the file with" if self.exempt() else ""
        return self._config_check(self._text_at(last), self._text_at(tip))

    def _last_promoted(self, tip: str) -> str:
        """The newest commit Headway wrote into this environment's file (a promotion or a
        re-commit); another environment's promotion says nothing about this file."""
        for commit in self._history():
            message = commit.message or ""
            found = trailers.trailers(message)
            promoted = trailers.promotion_of(message) or trailers.promotion_of(
                message, reverts=True
            )
            if promoted and found.get("Headway-Environment") == [self._env.name]:
                return str(commit.id)
        return ""

    def contains(self, revision: str, commit: str) -> bool:
        if revision == commit:
            return True
        repo = self._writer.repo
        try:
            return bool(repo.descendant_of(revision, commit))
        except (KeyError, ValueError, pygit2.GitError):
            return False  # a revision this clone has not fetched yet

    def commit_image(
        self, image: str, *, promotion: PromotionSpec, previous: str, file_version: str = ""
    ) -> str:
        """`file_version` (what the gate judged): commit only onto a tip whose file is exactly
        that one, else `FileChangedUnderGate` — also after the branch moved under the push."""
        return self._write(image, promotion, revert_of="", judged=file_version)

    def revert_image(self, image: str, *, promotion: PromotionSpec, commit: str) -> str:
        return self._write(image, promotion, revert_of=commit, judged="")

    def _write(self, image: str, spec: PromotionSpec, *, revert_of: str, judged: str) -> str:
        moved = ""
        for _ in range(_ATTEMPTS):
            tip = self._writer.refresh()
            if judged and str(self._blob_at(tip).id) != judged:
                raise FileChangedUnderGate(
                    f"{self._file} changed at {tip[:12]} after the gate judged it "
                    f"(blob {judged[:12]}, now {str(self._blob_at(tip).id)[:12]}): not committed"
                )
            edit = promotion_edit(
                self._text_at(tip),
                self._env,
                image=image,
                repository=self._repository,
                file=self._file,
                nonce="" if revert_of else spec.hotfix_nonce,
            )
            message = promotion_message(
                spec, self._env, previous=edit.previous, image=image, revert_of=revert_of
            )
            try:
                return self._writer.write(
                    parent=tip, edits={self._file: edit.text.encode()}, message=message
                )
            except (BranchMoved, PushRejected) as err:
                moved = str(err)
        raise SourceError(f"the branch kept moving ({_ATTEMPTS} attempts): {moved}")
