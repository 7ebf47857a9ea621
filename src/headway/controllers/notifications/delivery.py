"""The delivery worker: sends the outbox in its own task, so no controller ever waits on a
webhook, a Slack API or an SMTP server; retries with back-off (outbox.py) on the clock.

Metrics, under Argo CD's names where it has them:
`argocd_notifications_deliveries_total{trigger, template, notifier, succeeded}`,
and Headway's `headway_notifications_queued_total{trigger, notifier}`,
`headway_notifications_given_up_total{trigger, notifier}` and `headway_notifications_pending`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
from prometheus_client import Counter, Gauge
from prometheus_client.registry import CollectorRegistry

from headway.clock import Clock
from headway.controllers.notifications.state import NotifyState
from headway.notifiers import DeliveryError, send
from headway.notify.config import Service
from headway.notify.decide import Notification
from headway.notify.outbox import Delivery, after_failure, due, next_due
from headway.redaction import Redactor

__all__ = ["DeliveryWorker", "NotifyMetrics", "Resolver", "Sender"]

log = logging.getLogger(__name__)

#: Where a notification goes now: its service (None: no longer configured) and the redactor.
Resolver = Callable[[Notification], tuple[Service | None, Redactor]]
Sender = Callable[[Notification, Service, Redactor], Awaitable[None]]


class NotifyMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.deliveries = Counter(
            "argocd_notifications_deliveries", "Notification deliveries by outcome.",
            ["trigger", "template", "notifier", "succeeded"], registry=registry,
        )
        self.queued = Counter(
            "headway_notifications_queued", "Notifications a trigger queued for delivery.",
            ["trigger", "notifier"], registry=registry,
        )
        self.given_up = Counter(
            "headway_notifications_given_up",
            "Notifications dropped after every retry failed.",
            ["trigger", "notifier"], registry=registry,
        )
        self.pending = Gauge(
            "headway_notifications_pending", "Notifications waiting in the outbox.",
            registry=registry,
        )


class DeliveryWorker:
    def __init__(
        self,
        *,
        state: NotifyState,
        resolve: Resolver,
        clock: Clock,
        http: httpx2.AsyncClient,
        metrics: NotifyMetrics,
        sender: Sender | None = None,
    ) -> None:
        self._state = state
        self._resolve = resolve
        self._clock = clock
        self._metrics = metrics
        self._send: Sender = sender or (
            lambda n, service, redactor: send(n, service, http=http, redactor=redactor)
        )
        self._wake = asyncio.Event()
        self._sending = asyncio.Lock()  # the worker task and a caller never send one twice
        self._task: asyncio.Task[None] | None = None

    def enqueue(self, notifications: list[Notification]) -> None:
        """Queue these (persisted by the caller's save) and wake the worker."""
        now = self._clock.now().timestamp()
        for n in notifications:
            self._state.outbox.setdefault(n.key, Delivery(notification=n, due_at=now))
        self._metrics.pending.set(len(self._state.outbox))
        self._wake.set()

    def start(self) -> None:
        """Run the worker in the background of the running event loop (once)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def deliver_due(self) -> int:
        """Try every delivery that is due now; returns how many were tried."""
        async with self._sending:
            now = self._clock.now().timestamp()
            ready = sorted(due(self._state.outbox.values(), now), key=lambda d: d.due_at)
            for delivery in ready:
                await self._try(delivery)
            if ready:
                self._metrics.pending.set(len(self._state.outbox))
                self._state.save()
            return len(ready)

    async def _try(self, delivery: Delivery) -> None:
        n = delivery.notification
        service, redactor = self._resolve(n)
        labels = {"trigger": n.trigger, "template": n.template, "notifier": n.service}
        try:
            if service is None:
                raise DeliveryError(f"no service {n.service!r} is configured")
            await self._send(n, service, redactor)
        except DeliveryError as err:
            self._metrics.deliveries.labels(**labels, succeeded="false").inc()
            self._failed(delivery, str(err))
            return
        except Exception as err:  # a bad service setting must not stop the worker
            self._metrics.deliveries.labels(**labels, succeeded="false").inc()
            self._failed(delivery, redactor.text(f"{n.service}: {type(err).__name__}: {err}"))
            return
        self._metrics.deliveries.labels(**labels, succeeded="true").inc()
        self._state.outbox.pop(n.key, None)

    def _failed(self, delivery: Delivery, error: str) -> None:
        n = delivery.notification
        now = self._clock.now().timestamp()
        retry = after_failure(delivery, now=now, error=error)
        if retry is None:
            self._state.outbox.pop(n.key, None)
            self._metrics.given_up.labels(trigger=n.trigger, notifier=n.service).inc()
            log.warning("notification %s to %s gave up: %s", n.trigger, n.service, error)
            return
        self._state.outbox[n.key] = retry
        log.info(
            "notification %s to %s failed (try %d), again in %.0f s: %s",
            n.trigger, n.service, retry.attempts, retry.due_at - now, error,
        )

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            await self.deliver_due()
            upcoming = next_due(self._state.outbox.values())
            waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(self._wake.wait())]
            if upcoming is not None:
                delay = max(0.0, upcoming - self._clock.now().timestamp())
                waits.append(asyncio.ensure_future(self._clock.sleep(delay)))
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waits:
                    waiter.cancel()
