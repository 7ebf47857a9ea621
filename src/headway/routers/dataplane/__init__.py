"""The data plane of traffic routing: routers that carry requests to the pods.

`protocol` is the `TrafficRouter` interface and its values; `embedded/` and `haproxy/` are
the two routers behind it; `http1` is the HTTP/1.1 they speak to clients and the metrics
endpoint; `metrics` counts requests per pod-template hash, and `mesh_metrics` with
`mesh_metric_dialects` serve the local mesh's `/metrics` under Istio's and NGINX's names.
"""
