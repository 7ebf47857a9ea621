"""What exporting the mesh's requests also under Istio's and NGINX's names costs a scrape.

    .venv/bin/python bench/bench_mesh_metrics.py

Renders the runtime-wide `/metrics` text for VIRTUAL_SERVICES VirtualServices, each with a
stable and a canary destination seen on ROUTES routes with CODES status codes, with Headway's
own families only (the baseline) and with the Istio and NGINX families added, as the runtime
serves it; prints both, the ratio, and the text sizes.
"""

from __future__ import annotations

from _timing import per_call_us
from headway.routers.dataplane.mesh_metric_dialects import render_istio, render_nginx
from headway.routers.dataplane.mesh_metrics import PlaneSeries, Workload, render_labelled
from headway.routers.dataplane.metrics import RequestMetrics

VIRTUAL_SERVICES = 20
ROUTES = ("", "canary-header")
CODES = ("200", "404", "500")


def planes() -> list[PlaneSeries]:
    parts = []
    for index in range(VIRTUAL_SERVICES):
        metrics = RequestMetrics()
        for service, pod_hash in ((f"app{index}-stable", "aaa"), (f"app{index}-canary", "bbb")):
            for route in ROUTES:
                for code in CODES:
                    metrics.add(service=service, pod_template_hash=pod_hash, route=route,
                                code=code, count=7, seconds_each=0.02)
        parts.append(PlaneSeries(
            labels={"namespace": "shop", "virtualservice": f"app{index}"},
            snapshot=metrics.snapshot(),
            workloads={"aaa": Workload(f"app{index}", f"app{index}", "v1"),
                       "bbb": Workload(f"app{index}", f"app{index}", "v2")},
            stable_service=f"app{index}-stable",
            canary_service=f"app{index}-canary",
        ))
    return parts


def main() -> None:
    parts = planes()

    def headway_only() -> str:
        return render_labelled(parts)

    def with_dialects() -> str:
        return render_labelled(parts) + "\n".join([*render_istio(parts), *render_nginx(parts)])

    base = per_call_us(headway_only, 2.0)
    full = per_call_us(with_dialects, 2.0)
    print(f"{VIRTUAL_SERVICES} VirtualServices, {len(ROUTES)} routes, {len(CODES)} codes")
    print(f"  headway_* families only:        {base / 1000:8.2f} ms  {len(headway_only()):>8} B")
    print(f"  + istio_* and nginx_* families: {full / 1000:8.2f} ms  {len(with_dialects()):>8} B")
    print(f"  ratio: {full / base:.2f}x")


if __name__ == "__main__":
    main()
