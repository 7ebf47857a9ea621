"""The retry budget left of an automated app, as the metric reports it."""

from __future__ import annotations

import math

from headway.controllers.app.report import retries_left
from headway.model.application import Backoff, Retry

BACKOFF = Backoff(duration=5.0, factor=2, max_duration=180.0)


def test_a_failed_operation_spends_retries_from_the_limit() -> None:
    failed = {"operationState": {"phase": "Failed", "retryCount": 2}}
    assert retries_left(failed, Retry(limit=3, refresh=False, backoff=BACKOFF)) == 1.0
    assert retries_left(failed, None) == 3.0  # automated sync's default limit is 5


def test_a_success_restores_the_whole_budget_and_unlimited_is_infinite() -> None:
    done = {"operationState": {"phase": "Succeeded", "retryCount": 2}}
    assert retries_left(done, Retry(limit=3, refresh=False, backoff=BACKOFF)) == 3.0
    assert retries_left(done, Retry(limit=-1, refresh=False, backoff=BACKOFF)) == math.inf


def test_more_retries_than_the_limit_never_goes_below_zero() -> None:
    failed = {"operationState": {"phase": "Error", "retryCount": 9}}
    assert retries_left(failed, Retry(limit=3, refresh=False, backoff=BACKOFF)) == 0.0
