"""Sending one rendered notification to one service: webhook, Slack and Grafana annotations
over HTTP with the engine's client, email and any other Apprise URL through Apprise. See
docs/notifications.md.

Every failure is a `DeliveryError` whose message is safe to log: URLs and Secret values in it
are masked by the caller's `Redactor`.
"""

from headway.notifiers.send import DeliveryError, send

__all__ = ["DeliveryError", "send"]
