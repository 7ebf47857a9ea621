"""Retry schedule of failed deliveries."""

from __future__ import annotations

from headway.notify.decide import Notification
from headway.notify.outbox import MAX_ATTEMPTS, Delivery, after_failure, backoff_seconds, due

N = Notification(key="k", trigger="on-sync-failed", template="t", service="hook", recipient="",
                 subject="Application argocd/web", title="", message="m")


def test_backoff_doubles_from_one_second_up_to_five_minutes() -> None:
    assert [backoff_seconds(a) for a in (1, 2, 3, 4, 9, 10)] == [1, 2, 4, 8, 256, 300]


def test_a_failed_delivery_is_due_again_after_its_backoff_and_dropped_after_the_last_try() -> None:
    delivery = Delivery(notification=N, due_at=100.0)
    first = after_failure(delivery, now=100.0, error="503")
    assert first is not None and (first.attempts, first.due_at) == (1, 101.0)
    second = after_failure(first, now=101.0, error="503")
    assert second is not None and second.due_at == 103.0
    assert due([second], 102.9) == [] and due([second], 103.0) == [second]
    last = Delivery(notification=N, due_at=0.0, attempts=MAX_ATTEMPTS - 1)
    assert after_failure(last, now=0.0, error="503") is None


def test_a_delivery_survives_its_json_round_trip() -> None:
    delivery = Delivery(notification=N, due_at=5.0, attempts=2, last_error="503")
    assert Delivery.from_json(delivery.as_json()) == delivery
