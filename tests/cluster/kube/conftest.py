"""The local runtime's Kubernetes API over a store file, with a kubeconfig for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from headway.cli.runtime import kubeconfig_text
from headway.clock import SystemClock
from headway.cluster.local.api.kubeapi.server import ApiServer


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(kubeconfig, the store file the API server serves)."""
    db = tmp_path / "served" / "cluster.db"
    db.parent.mkdir()
    server = ApiServer(db_path=db, clock=SystemClock())
    server.start()
    config = tmp_path / "kubeconfig"
    config.write_text(kubeconfig_text(f"http://{server.address}"))
    try:
        yield config, db
    finally:
        server.stop()
