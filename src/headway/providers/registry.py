"""Which provider measures a metric: by its `provider` field, plugins by their name."""

from __future__ import annotations

from collections.abc import Mapping

import httpx2

from headway.clock import Clock
from headway.model.analysis import Metric
from headway.providers.job import JobProvider
from headway.providers.judge import JUDGE_PLUGIN, JudgeProvider
from headway.providers.prometheus import PrometheusProvider
from headway.providers.protocol import MetricProvider
from headway.providers.traffic import PLUGIN_NAME, AddressSource, TrafficProvider
from headway.providers.web import WebProvider

__all__ = ["ProviderRegistry", "UnsupportedProvider", "default_registry", "provider_key"]


class UnsupportedProvider(LookupError):
    """A metric whose provider Headway does not implement (datadog, newRelic, ...)."""


def provider_key(metric: Metric) -> str:
    """`prometheus`, `web`, `job`, or `plugin:<name>` for a plugin block."""
    kind = metric.provider.kind
    if kind != "plugin":
        return kind
    names = list(metric.provider.plugin or {})
    return f"plugin:{names[0]}" if len(names) == 1 else "plugin:"


class ProviderRegistry:
    def __init__(self, providers: Mapping[str, MetricProvider]) -> None:
        self._providers = dict(providers)

    @property
    def keys(self) -> frozenset[str]:
        """The provider keys served (`prometheus`, `plugin:<name>`, ...)."""
        return frozenset(self._providers)

    def for_metric(self, metric: Metric) -> MetricProvider:
        key = provider_key(metric)
        provider = self._providers.get(key)
        if provider is None:
            known = ", ".join(sorted(k.removeprefix("plugin:") for k in self._providers))
            raise UnsupportedProvider(
                f'metric "{metric.name}": provider {key.removeprefix("plugin:") or "plugin"!r} '
                f"is not supported by Headway (supported: {known})"
            )
        return provider


def default_registry(
    client: httpx2.AsyncClient, clock: Clock, *, traffic_address: AddressSource = None
) -> ProviderRegistry:
    """Every built-in provider (what `model/support.py` lists as supported, which a test
    holds equal), sharing one HTTP client; `traffic_address` is the default
    metrics address for `headway.dev/traffic` (the local runtime's `metricsAddress`), or a
    function returning it, called at each measurement that needs it."""
    return ProviderRegistry(
        {
            "prometheus": PrometheusProvider(client, clock),
            "web": WebProvider(client, clock),
            "job": JobProvider(clock),
            f"plugin:{PLUGIN_NAME}": TrafficProvider(
                client, clock, default_address=traffic_address
            ),
            f"plugin:{JUDGE_PLUGIN}": JudgeProvider(client, clock, default_address=traffic_address),
        }
    )
