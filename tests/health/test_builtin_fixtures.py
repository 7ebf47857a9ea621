"""Every built-in check against one YAML fixture per state.

The expected status is the fixture file name's first word (`progressing-updating.yaml` ->
Progressing); an optional first line `# expect-message: ...` pins the message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from headway.health import HealthStatus, assess

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(FIXTURES.glob("*/*.yaml"))
MESSAGE_PREFIX = "# expect-message: "


def _expected(path: Path) -> tuple[HealthStatus, str | None]:
    status = HealthStatus(path.stem.split("-")[0].capitalize())
    first = path.read_text().splitlines()[0]
    message = first[len(MESSAGE_PREFIX) :] if first.startswith(MESSAGE_PREFIX) else None
    return status, message


def test_every_builtin_kind_has_fixtures_for_several_states() -> None:
    kinds = {path.parent.name for path in CASES}
    assert len(kinds) == 18
    for kind in kinds:
        states = {p.stem.split("-")[0] for p in CASES if p.parent.name == kind}
        assert len(states) >= 2, kind


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture(path: Path) -> None:
    status, message = _expected(path)
    result = assess(yaml.safe_load(path.read_text()))
    assert result is not None
    assert result.status is status, result
    if message is not None:
        assert result.message == message
