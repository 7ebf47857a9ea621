"""What does a consistent paginated list cost in the local store?

Kubernetes serves every page of a list from the first page's snapshot; the local store
rebuilds that snapshot from its event log when objects changed after the first page. This
measures, in one run, reading every page of OBJECTS ConfigMaps (PAGE per page):

  one list        list() of everything at once (the baseline)
  quiet pages     list_page() page after page, nothing written meanwhile
  churned pages   list_page() page after page, CHURN objects rewritten after the first page
                  (each later page rebuilds them from the event log)

Ratios are "N times the one-list time" (higher = more overhead).

Run: .venv/bin/python bench/bench_store_paging.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from _timing import per_call_us
from headway.clock import SystemClock
from headway.cluster.local import LocalCluster
from headway.cluster.protocol import ListPage

OBJECTS = 2000
PAGE = 250
CHURN = 200


def configmap(i: int, value: str = "1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"cm-{i:05d}", "namespace": "default"},
            "data": {"value": value, "index": str(i)}}


def all_pages(store: LocalCluster, first: ListPage) -> int:
    seen, page = len(first.items), first
    while page.continue_token:
        page = store.list_page("v1", "ConfigMap", limit=PAGE, continue_token=page.continue_token)
        seen += len(page.items)
    return seen


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, \
            LocalCluster(Path(tmp) / "store.db", SystemClock()) as store:
        for i in range(OBJECTS):
            store.create(configmap(i))
        one_list = per_call_us(lambda: store.list("v1", "ConfigMap"), budget_s=2.0)
        quiet_first = store.list_page("v1", "ConfigMap", limit=PAGE)
        assert all_pages(store, quiet_first) == OBJECTS
        quiet = per_call_us(lambda: all_pages(store, quiet_first), budget_s=2.0)
        churned_first = store.list_page("v1", "ConfigMap", limit=PAGE)
        for i in range(0, OBJECTS, OBJECTS // CHURN):
            store.update(configmap(i, value="2"))
        assert all_pages(store, churned_first) == OBJECTS
        churned = per_call_us(lambda: all_pages(store, churned_first), budget_s=2.0)
    print(f"{OBJECTS} ConfigMaps, pages of {PAGE}, {CHURN} rewritten after the first page")
    print(f"{'one list':<16}{one_list / 1000:9.1f} ms   1.00x")
    for label, micros in (("quiet pages", quiet), ("churned pages", churned)):
        print(f"{label:<16}{micros / 1000:9.1f} ms   {micros / one_list:.2f}x")


if __name__ == "__main__":
    main()
