"""A metric's `provider` block: one table per provider Argo Rollouts knows.

prometheus, web and job get typed views (Headway's providers read them); the others are
validated field by field and kept as mappings. Exactly one provider per metric.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.model import schema as s
from headway.model.views import view

__all__ = ["PROVIDER", "PROVIDER_FIELDS", "MetricProvider", "PrometheusMetric", "WebMetric"]

PROVIDER_FIELDS = (
    "prometheus",
    "web",
    "job",
    "datadog",
    "newRelic",
    "cloudWatch",
    "wavefront",
    "kayenta",
    "graphite",
    "influxdb",
    "skywalking",
    "plugin",
)


@view
class Header:
    key: str
    value: str


@view
class PrometheusMetric:
    address: str | None
    query: str | None
    timeout: int | None  # seconds
    insecure: bool
    headers: tuple[Header, ...]
    authentication: Mapping[str, Any]
    range_query: Mapping[str, Any] | None


@view
class WebMetric:
    url: str
    method: str
    headers: tuple[Header, ...]
    body: str | None
    json_body: Any
    json_path: str
    timeout_seconds: int
    insecure: bool
    authentication: Mapping[str, Any]


@view
class JobMetric:
    metadata: Mapping[str, Any]
    spec: Mapping[str, Any]


@view
class MetricProvider:
    prometheus: PrometheusMetric | None
    web: WebMetric | None
    job: JobMetric | None
    datadog: Mapping[str, Any] | None
    new_relic: Mapping[str, Any] | None
    cloud_watch: Mapping[str, Any] | None
    wavefront: Mapping[str, Any] | None
    kayenta: Mapping[str, Any] | None
    graphite: Mapping[str, Any] | None
    influxdb: Mapping[str, Any] | None
    skywalking: Mapping[str, Any] | None
    plugin: Mapping[str, Any] | None

    @property
    def kind(self) -> str:
        """The provider's field name (`prometheus`, `web`, `plugin`, ...): the first of
        `set_fields(self, PROVIDER_FIELDS)`, found without reading the fields after it."""
        for name in PROVIDER_FIELDS:
            if getattr(self, s.snake_case(name)) is not None:
                return name
        return ""


def _exactly_one_provider(provider: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    present = [k for k, v in provider.items() if k in PROVIDER_FIELDS and v is not None]
    if not present:
        report.error(path, f"a metric needs a provider: one of {', '.join(PROVIDER_FIELDS)}")
    elif len(present) > 1:
        report.error(
            (*path, present[1]),
            f"a metric may have only one provider; found {' and '.join(present)}",
        )


def _body_or_json_body(web: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    if web.get("body") is not None and web.get("jsonBody") is not None:
        report.error((*path, "jsonBody"), "use body or jsonBody, not both")


_HEADER = s.Schema(
    "WebMetricHeader",
    (s.Field("key", s.STR, required=True), s.Field("value", s.STR, required=True)),
    Header,
)
_AUTHENTICATION = s.Schema(
    "Authentication",
    (
        s.Field(
            "sigv4",
            s.Obj(
                s.Schema(
                    "Sigv4Config",
                    tuple(s.Field(n, s.STR) for n in ("region", "profile", "roleArn")),
                )
            ),
        ),
        s.Field(
            "oauth2",
            s.Obj(
                s.Schema(
                    "OAuth2Config",
                    (
                        s.Field("tokenUrl", s.STR),
                        s.Field("clientId", s.STR),
                        s.Field("clientSecret", s.STR),
                        s.Field("scopes", s.STRING_LIST),
                    ),
                )
            ),
        ),
        s.Field(
            "basicAuth",
            s.Obj(
                s.Schema(
                    "BasicAuthConfig", (s.Field("username", s.STR), s.Field("password", s.STR))
                )
            ),
        ),
    ),
)
_TEXT_DURATION = s.Duration(as_seconds=False)

_PROMETHEUS = s.Schema(
    "PrometheusMetric",
    (
        s.Field("address", s.STR),
        s.Field("query", s.STR),
        s.Field("timeout", s.Scalar("integer", minimum=0)),
        s.Field("insecure", s.BOOL, default=False),
        s.Field("headers", s.ListOf(s.Obj(_HEADER))),
        s.Field("authentication", s.Obj(_AUTHENTICATION), default={}),
        s.Field(
            "rangeQuery",
            s.Obj(
                s.Schema(
                    "PrometheusRangeQueryArgs",
                    (
                        s.Field("start", s.STR),
                        s.Field("end", s.STR),
                        s.Field("step", _TEXT_DURATION),
                    ),
                )
            ),
        ),
    ),
    PrometheusMetric,
)
_WEB = s.Schema(
    "WebMetric",
    (
        s.Field("url", s.STR, required=True),
        s.Field("method", s.Enum(("GET", "POST", "PUT")), default="GET"),
        s.Field("headers", s.ListOf(s.Obj(_HEADER))),
        s.Field("body", s.STR),
        s.Field("jsonBody", s.ANY),
        s.Field("jsonPath", s.STR, default="{$}"),
        s.Field("timeoutSeconds", s.Scalar("integer", minimum=0), default=10),
        s.Field("insecure", s.BOOL, default=False),
        s.Field("authentication", s.Obj(_AUTHENTICATION), default={}),
    ),
    WebMetric,
    checks=(_body_or_json_body,),
)
_JOB = s.Schema(
    "JobMetric",
    (
        s.Field("metadata", s.AnyValue(mapping=True), default={}),
        s.Field("spec", s.AnyValue(mapping=True), required=True),
    ),
    JobMetric,
)
_DATADOG = s.Schema(
    "DatadogMetric",
    (
        s.Field("interval", _TEXT_DURATION),
        s.Field("query", s.STR),
        s.Field("queries", s.STRING_MAP),
        s.Field("formula", s.STR),
        s.Field("apiVersion", s.Enum(("v1", "v2"))),
        s.Field(
            "aggregator",
            s.Enum(("avg", "min", "max", "sum", "last", "percentile", "mean", "l2norm", "area")),
        ),
        s.Field(
            "secretRef",
            s.Obj(s.Schema("SecretRef", (s.Field("name", s.STR), s.Field("namespaced", s.BOOL)))),
        ),
        s.Field("requestTimeout", _TEXT_DURATION),
    ),
)
_QUERY_ONLY = (s.Field("address", s.STR), s.Field("query", s.STR))
_KAYENTA = s.Schema(
    "KayentaMetric",
    (
        *(
            s.Field(n, s.STR, required=True)
            for n in (
                "address",
                "application",
                "canaryConfigName",
                "metricsAccountName",
                "configurationAccountName",
                "storageAccountName",
            )
        ),
        s.Field(
            "threshold",
            s.Obj(
                s.Schema(
                    "KayentaThreshold",
                    (
                        s.Field("pass", s.INT, required=True),
                        s.Field("marginal", s.INT, required=True),
                    ),
                )
            ),
            required=True,
        ),
        s.Field("scopes", s.ListOf(s.AnyValue(mapping=True)), required=True),
        s.Field("lookback", s.BOOL),
    ),
)

PROVIDER = s.Schema(
    "MetricProvider",
    (
        s.Field("prometheus", s.Obj(_PROMETHEUS)),
        s.Field("web", s.Obj(_WEB)),
        s.Field("job", s.Obj(_JOB)),
        s.Field("datadog", s.Obj(_DATADOG)),
        s.Field(
            "newRelic",
            s.Obj(
                s.Schema(
                    "NewRelicMetric",
                    (
                        s.Field("profile", s.STR),
                        s.Field("query", s.STR, required=True),
                        s.Field("timeout", s.INT),
                    ),
                )
            ),
        ),
        s.Field(
            "cloudWatch",
            s.Obj(
                s.Schema(
                    "CloudWatchMetric",
                    (
                        s.Field("interval", _TEXT_DURATION),
                        s.Field(
                            "metricDataQueries", s.ListOf(s.AnyValue(mapping=True)), required=True
                        ),
                    ),
                )
            ),
        ),
        s.Field("wavefront", s.Obj(s.Schema("WavefrontMetric", _QUERY_ONLY))),
        s.Field("kayenta", s.Obj(_KAYENTA)),
        s.Field("graphite", s.Obj(s.Schema("GraphiteMetric", _QUERY_ONLY))),
        s.Field(
            "influxdb",
            s.Obj(s.Schema("InfluxdbMetric", (s.Field("profile", s.STR), s.Field("query", s.STR)))),
        ),
        s.Field(
            "skywalking",
            s.Obj(
                s.Schema("SkyWalkingMetric", (*_QUERY_ONLY, s.Field("interval", _TEXT_DURATION)))
            ),
        ),
        s.Field("plugin", s.AnyValue(mapping=True)),
    ),
    MetricProvider,
    checks=(_exactly_one_provider,),
)
