"""Forge clients per TLS setting are pooled and bounded (controllers/appset/tls_clients.py)."""

from __future__ import annotations

import httpx2

from headway.controllers.appset.tls_clients import TlsClients


def _pool(kept: int) -> tuple[TlsClients, list[tuple[bool, str]]]:
    made: list[tuple[bool, str]] = []

    def make(insecure: bool, ca_pem: str) -> httpx2.Client:
        made.append((insecure, ca_pem))
        return httpx2.Client()

    return TlsClients(make, kept=kept), made


def test_one_client_per_setting_reused_between_steps() -> None:
    pool, made = _pool(kept=4)
    first = pool.get(False, "ca-1")
    assert pool.get(False, "ca-1") is first
    assert pool.get(True, "ca-1") is not first
    assert made == [(False, "ca-1"), (True, "ca-1")]


def test_rotated_certificates_do_not_accumulate_clients() -> None:
    pool, made = _pool(kept=2)
    clients = [pool.get(False, f"ca-{n}") for n in range(5)]
    assert [c.is_closed for c in clients] == [True, True, True, False, False]
    assert len(made) == 5


def test_the_least_recently_used_setting_goes_first() -> None:
    pool, _ = _pool(kept=2)
    old = pool.get(False, "old")
    newer = pool.get(False, "newer")
    assert pool.get(False, "old") is old  # used again: now the most recent
    pool.get(False, "newest")
    assert newer.is_closed and not old.is_closed
