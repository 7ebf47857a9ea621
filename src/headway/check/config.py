"""The per-repository check config: `.headway/check.yaml` or `headway-check.yaml`.

```yaml
disable: [HW316]                      # rules off for the whole repository
repositories:                         # other repositories, by URL, to local checkouts
  https://github.com/example/charts.git: ../charts
selfURLs:                             # more URLs that mean "this repository"
  - https://git.internal/example/infra.git
health: [example.com/Widget]          # kinds whose health Argo CD assesses elsewhere
externalTemplates: [platform-slo]     # analysis templates installed outside this repository
drill:                                # the scenario HW214/HW215 replay each canary on
  scenario: error-ratio=1%->5%        # as `headway drill --scenario`
  rps: 100
  runs: 20                            # replays per release (at most 200)
  horizon: 15m
  seed: 0
  minDetection: 10%                   # under this share of bad releases aborted: HW214
  maxFalseAborts: 10%                 # over this share of identical releases aborted: HW215
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from headway.check.drill_engine import DrillSettings
from headway.check.manifest import normalize_repo_url
from headway.model.durations import DurationError, parse_duration

__all__ = ["CONFIG_FILES", "CheckConfig", "ConfigError", "drill_settings_of", "parse_config"]

CONFIG_FILES = (".headway/check.yaml", "headway-check.yaml")
_KEYS = {"disable", "repositories", "selfURLs", "health", "externalTemplates", "drill"}
_DRILL_KEYS = {"scenario", "rps", "runs", "horizon", "seed", "minDetection", "maxFalseAborts"}
MAX_DRILL_RUNS = 200


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class CheckConfig:
    disable: tuple[str, ...] = ()
    repositories: dict[str, str] = field(default_factory=dict)
    self_urls: tuple[str, ...] = ()
    health: frozenset[str] = frozenset()
    external_templates: frozenset[str] = frozenset()
    drill: DrillSettings = field(default_factory=DrillSettings)


def _strings(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of strings")
    return list(value)


def parse_config(data: Any, file: str, known_rules: set[str]) -> CheckConfig:
    """Validate the loaded YAML of a config file; unknown keys and rule ids are errors."""
    if data is None:
        return CheckConfig()
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: expected a mapping at the top level")
    unknown = sorted(set(map(str, data)) - _KEYS)
    if unknown:
        raise ConfigError(f"{file}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})")
    disable = [d.upper() for d in _strings(data.get("disable"), f"{file}: disable")]
    bad = [d for d in disable if d not in known_rules]
    if bad:
        raise ConfigError(f"{file}: disable: {bad[0]!r} is not a Headway rule")
    repositories = data.get("repositories") or {}
    if not isinstance(repositories, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in repositories.items()
    ):
        raise ConfigError(f"{file}: repositories: expected a map of repository URL to local path")
    return CheckConfig(
        disable=tuple(disable),
        repositories={normalize_repo_url(k): v for k, v in repositories.items()},
        self_urls=tuple(
            normalize_repo_url(u) for u in _strings(data.get("selfURLs"), f"{file}: selfURLs")
        ),
        health=frozenset(_strings(data.get("health"), f"{file}: health")),
        external_templates=frozenset(
            _strings(data.get("externalTemplates"), f"{file}: externalTemplates")
        ),
        drill=_drill_settings(data.get("drill"), f"{file}: drill"),
    )


def _share(value: Any, where: str) -> float:
    text = str(value).strip()
    try:
        share = float(text.removesuffix("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise ConfigError(f"{where}: {value!r} is not a share (write 10% or 0.1)") from None
    if not 0 <= share <= 1:
        raise ConfigError(f"{where}: {value!r} is not between 0 and 100%")
    return share


def _number(value: Any, where: str, *, whole: bool = False) -> float:
    wrong = isinstance(value, bool) or not isinstance(value, int | float)
    if wrong or (whole and not isinstance(value, int)):
        raise ConfigError(f"{where}: expected {'a whole number' if whole else 'a number'}")
    return float(value)


def drill_settings_of(data: Any, file: str) -> DrillSettings:
    """The `drill:` block of a config file's `data` alone (what `parse_config` reads there),
    for a reader that needs nothing else of it."""
    return _drill_settings(data.get("drill") if isinstance(data, dict) else None, f"{file}: drill")


def _drill_settings(data: Any, where: str) -> DrillSettings:
    """The `drill:` block; the scenario text is checked by the CLI, which owns its parser."""
    if data is None:
        return DrillSettings()
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping")
    unknown = sorted(set(map(str, data)) - _DRILL_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_DRILL_KEYS))})"
        )
    base = DrillSettings()
    runs = int(_number(data.get("runs", base.runs), f"{where}.runs", whole=True))
    rps = _number(data.get("rps", base.rps), f"{where}.rps")
    if not 1 <= runs <= MAX_DRILL_RUNS or rps <= 0:
        raise ConfigError(f"{where}: runs must be 1 to {MAX_DRILL_RUNS} and rps above 0")
    horizon = str(data.get("horizon", base.horizon))
    try:
        seconds = parse_duration(horizon, bare_seconds=False)
    except DurationError as error:
        raise ConfigError(f"{where}.horizon: {error}") from None
    if seconds <= 0:
        raise ConfigError(f"{where}.horizon: must be above 0")
    return DrillSettings(
        scenario=str(data.get("scenario", base.scenario)),
        rps=rps,
        runs=runs,
        horizon=horizon,
        seed=int(_number(data.get("seed", base.seed), f"{where}.seed", whole=True)),
        min_detection=_share(data.get("minDetection", base.min_detection), f"{where}.minDetection"),
        max_false_aborts=_share(
            data.get("maxFalseAborts", base.max_false_aborts), f"{where}.maxFalseAborts"
        ),
    )
