"""The local backend: an embedded store with Kubernetes semantics (and, beside it, the
local runtime that turns workloads into processes)."""

from headway.cluster.events import events_for, record_event
from headway.cluster.local.api.store import LocalCluster

__all__ = ["LocalCluster", "events_for", "record_event"]
