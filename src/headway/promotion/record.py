"""A `Promotion` object (`headway.dev/v1alpha1`) read into frozen values and written back. Pure.

One Promotion moves one image into one environment of one pipeline. Its spec says what was
asked (by whom, why, and the approve/deny decisions recorded on it); its status is everything
the controller decided, so a controller killed at any point resumes from it:

    spec:   pipeline, environment, image, author, requestedAt, origin, breakGlass, decisions
    status: phase, message, previousImage, commit, committedAt, approval, revertCommit, next
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from headway.kubetime import format_precise_time, parse_time
from headway.model.obj import Obj
from headway.promotion.approval import Decision

__all__ = [
    "API_VERSION",
    "KIND",
    "TERMINAL",
    "ApprovalRecord",
    "BreakGlass",
    "Phase",
    "PromotionSpec",
    "PromotionStatus",
    "read_spec",
    "read_status",
    "spec_problems",
    "status_json",
]

API_VERSION = "headway.dev/v1alpha1"
KIND = "Promotion"


class Phase(StrEnum):
    PENDING = "Pending"  # not looked at yet, or queued behind an older promotion
    AWAITING_APPROVAL = "AwaitingApproval"
    COMMITTED = "Committed"  # the image is in Git; the Application has not picked it up yet
    VERIFYING = "Verifying"  # the Application runs it; waiting for live and Healthy
    REVERTING = "Reverting"  # failed: the previous image is being re-committed
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    DENIED = "Denied"
    TIMED_OUT = "TimedOut"
    SUPERSEDED = "Superseded"
    REFUSED = "Refused"  # skips the pipeline without break-glass


TERMINAL = frozenset(
    {
        Phase.SUCCEEDED,
        Phase.FAILED,
        Phase.DENIED,
        Phase.TIMED_OUT,
        Phase.SUPERSEDED,
        Phase.REFUSED,
    }
)


@dataclass(frozen=True)
class BreakGlass:
    by: str
    reason: str


@dataclass(frozen=True)
class PromotionSpec:
    name: str
    namespace: str
    pipeline: str
    environment: str
    image: str
    author: str
    requested_at: datetime
    origin: str = "cli"  # cli | auto | rollback
    break_glass: BreakGlass | None = None
    decisions: tuple[Decision, ...] = ()
    hotfix_reason: str = ""  # a hotfix: skip analysis and force a new pod template (nonce)

    @property
    def hotfix_nonce(self) -> str:
        """The nonce a hotfix writes: the promotion's name, so a resumed step writes the same."""
        return self.name if self.hotfix_reason else ""


@dataclass(frozen=True)
class ApprovalRecord:
    requested_at: datetime
    deadline: datetime
    verdict: str = "Waiting"
    decided_by: str = ""
    decided_at: str = ""
    via: str = ""
    ignored: tuple[str, ...] = ()
    issue: int = 0  # the forge issue that collects approval comments (0: none)
    issue_url: str = ""
    reason: str = ""  # why the gate held it (the config change), shown until it is decided
    file_version: str = ""  # the target file the approver is asked about (its Git blob id)
    # Its ApprovalRequested Events are recorded. A new request starts False; a record stored
    # before this field existed was announced when it was made, so an absent field is True.
    announced: bool = True


@dataclass(frozen=True)
class PromotionStatus:
    phase: Phase = Phase.PENDING
    message: str = ""
    previous_image: str = ""
    commit: str = ""
    committed_at: datetime | None = None
    approval: ApprovalRecord | None = None
    revert_commit: str = ""
    next_promotion: str = ""
    finished_at: datetime | None = None
    notes: tuple[str, ...] = field(default=())

    def moved(self, phase: Phase, message: str, **changes: Any) -> PromotionStatus:
        return replace(self, phase=phase, message=message, **changes)


def _decision(raw: Any) -> Decision | None:
    if not isinstance(raw, dict):
        return None
    at = parse_time(raw.get("at"))
    if at is None:
        return None
    return Decision(
        verdict=str(raw.get("decision") or ""),
        by=str(raw.get("by") or ""),
        at=at,
        via=str(raw.get("via") or "cli"),
        comment=str(raw.get("comment") or ""),
    )


def read_spec(obj: Obj) -> PromotionSpec:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    glass = spec.get("breakGlass")
    raw_decisions = spec.get("decisions")
    listed: list[Any] = raw_decisions if isinstance(raw_decisions, list) else []
    decisions = (_decision(d) for d in listed)
    requested = parse_time(spec.get("requestedAt")) or parse_time(meta.get("creationTimestamp"))
    return PromotionSpec(
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or ""),
        pipeline=str(spec.get("pipeline") or ""),
        environment=str(spec.get("environment") or ""),
        image=str(spec.get("image") or ""),
        author=str(spec.get("author") or ""),
        requested_at=requested or datetime.min.replace(tzinfo=UTC),
        origin=str(spec.get("origin") or "cli"),
        break_glass=(
            BreakGlass(str(glass.get("by") or ""), str(glass.get("reason") or ""))
            if isinstance(glass, dict)
            else None
        ),
        decisions=tuple(d for d in decisions if d is not None),
        hotfix_reason=str((spec.get("hotfix") or {}).get("reason") or "")
        if isinstance(spec.get("hotfix"), dict)
        else "",
    )


def spec_problems(obj: Obj) -> list[str]:
    """What makes a stored Promotion unusable, each naming its field ([] when none)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return ["spec: required (a mapping)"]
    problems = [
        f"spec.{key}: required (a non-empty string)"
        for key in ("pipeline", "environment", "image", "author")
        if not isinstance(spec.get(key), str) or not spec.get(key)
    ]
    if not isinstance(spec.get("decisions") or [], list):
        problems.append("spec.decisions: must be a list")
    for index, raw in enumerate(spec.get("decisions") or []):
        if isinstance(spec.get("decisions"), list) and _decision(raw) is None:
            problems.append(f"spec.decisions[{index}]: needs decision, by and an RFC 3339 at")
    return problems


def _approval(raw: Any) -> ApprovalRecord | None:
    if not isinstance(raw, dict):
        return None
    requested, deadline = parse_time(raw.get("requestedAt")), parse_time(raw.get("deadline"))
    if requested is None or deadline is None:
        return None
    return ApprovalRecord(
        requested_at=requested,
        deadline=deadline,
        verdict=str(raw.get("verdict") or "Waiting"),
        decided_by=str(raw.get("decidedBy") or ""),
        decided_at=str(raw.get("decidedAt") or ""),
        via=str(raw.get("via") or ""),
        ignored=tuple(str(i) for i in raw.get("ignored") or []),
        issue=int(raw.get("issue") or 0) if str(raw.get("issue") or "0").isdigit() else 0,
        issue_url=str(raw.get("issueUrl") or ""),
        reason=str(raw.get("reason") or ""),
        file_version=str(raw.get("fileVersion") or ""),
        announced=raw.get("announced") is not False,
    )


def read_status(obj: Obj) -> PromotionStatus:
    raw = obj.get("status") or {}
    try:
        phase = Phase(str(raw.get("phase") or "Pending"))
    except ValueError:
        phase = Phase.PENDING
    return PromotionStatus(
        phase=phase,
        message=str(raw.get("message") or ""),
        previous_image=str(raw.get("previousImage") or ""),
        commit=str(raw.get("commit") or ""),
        committed_at=parse_time(raw.get("committedAt")),
        approval=_approval(raw.get("approval")),
        revert_commit=str(raw.get("revertCommit") or ""),
        next_promotion=str(raw.get("nextPromotion") or ""),
        finished_at=parse_time(raw.get("finishedAt")),
        notes=tuple(str(n) for n in raw.get("notes") or []),
    )


def _approval_json(record: ApprovalRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "requestedAt": format_precise_time(record.requested_at),
        "deadline": format_precise_time(record.deadline),
        "verdict": record.verdict,
    }
    if record.decided_by:
        out.update(decidedBy=record.decided_by, decidedAt=record.decided_at, via=record.via)
    if record.ignored:
        out["ignored"] = list(record.ignored)
    if record.issue:
        out.update(issue=record.issue, issueUrl=record.issue_url)
    if record.reason:
        out["reason"] = record.reason
    if record.file_version:
        out["fileVersion"] = record.file_version
    if not record.announced:
        out["announced"] = False
    return out


def status_json(status: PromotionStatus) -> dict[str, Any]:
    """The status as stored; empty fields are left out."""
    out: dict[str, Any] = {"phase": status.phase.value, "message": status.message}
    texts = {
        "previousImage": status.previous_image,
        "commit": status.commit,
        "revertCommit": status.revert_commit,
        "nextPromotion": status.next_promotion,
    }
    out.update({k: v for k, v in texts.items() if v})
    if status.committed_at is not None:
        out["committedAt"] = format_precise_time(status.committed_at)
    if status.finished_at is not None:
        out["finishedAt"] = format_precise_time(status.finished_at)
    if status.approval is not None:
        out["approval"] = _approval_json(status.approval)
    if status.notes:
        out["notes"] = list(status.notes)
    return out
