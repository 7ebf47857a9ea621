"""Whether the analysis evidence of a Rollout's current revision lets anyone move it forward.

Purely computational. Two callers ask:

* `rollouts promote` (a person): `promotion_refusal` says why a promote must be refused.
  A run of the current pod hash that has Failed or Errored refuses every promote, whatever
  `status.abort` says: between a run failing and the controller writing the abort, a promote
  would otherwise skip the failed step and make the bad revision stable. An Inconclusive run
  refuses `--full` (it would skip the missing evidence) and refuses a plain promote until the
  controller has paused on it; from then on a plain promote clears that pause and the
  controller runs the analysis again (it never skips the step).
* the Rollout controller: `runs_changed` says whether the runs it decided on are still what
  is stored; when one changed phase since, it decides again instead of acting on a stale view.

Runs that were superseded (an abort, a retry, a new template) and runs of other pod hashes
are not evidence about the current revision and are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from headway.rollout.runs import RunView

__all__ = ["BAD_PHASES", "promotion_refusal", "runs_changed"]

BAD_PHASES = ("Failed", "Error")
_INCONCLUSIVE_PAUSE = "InconclusiveAnalysis"


def _current_runs(runs: Iterable[RunView], pod_hash: str) -> list[RunView]:
    return [r for r in runs if r.pod_hash == pod_hash and not r.superseded]


def _paused_on_inconclusive(status: Mapping[str, Any]) -> bool:
    pauses = status.get("pauseConditions") or []
    return any(p.get("reason") == _INCONCLUSIVE_PAUSE for p in pauses)


def promotion_refusal(
    status: Mapping[str, Any], runs: Iterable[RunView], *, full: bool
) -> str | None:
    """Why promoting a Rollout with this status and these runs must be refused, or None."""
    current = _current_runs(runs, str(status.get("currentPodHash") or ""))
    bad = next((r for r in current if r.phase in BAD_PHASES), None)
    if bad is not None:
        detail = f": {bad.message}" if bad.message else ""
        return (
            f"analysis run '{bad.name}' {bad.phase}{detail}; the revision cannot be promoted "
            "(the controller aborts it; fix the cause, then `retry` or change the image)"
        )
    unsure = next((r for r in current if r.phase == "Inconclusive"), None)
    if unsure is None:
        return None
    if full:
        return (
            f"analysis run '{unsure.name}' is Inconclusive; `promote --full` would skip the "
            "missing evidence (a plain `promote` runs the analysis again)"
        )
    if not _paused_on_inconclusive(status):
        return (
            f"analysis run '{unsure.name}' is Inconclusive and the controller has not paused "
            "on it yet; promote again once the rollout shows InconclusiveAnalysis"
        )
    return None


def runs_changed(before: Iterable[RunView], after: Iterable[RunView]) -> bool:
    """True when a run's phase differs from the view decided on (a new run counts as
    Pending, the phase it is created with)."""
    known = {r.name: r.phase for r in before}
    return any(known.get(r.name, "Pending") != r.phase for r in after)
