"""The per-repository check config: `.headway/check.yaml` or `headway-check.yaml`.

```yaml
disable: [HW316]                      # rules off for the whole repository
repositories:                         # other repositories, by URL, to local checkouts
  https://github.com/example/charts.git: ../charts
selfURLs:                             # more URLs that mean "this repository"
  - https://git.internal/example/infra.git
health: [example.com/Widget]          # kinds whose health Argo CD assesses elsewhere
externalTemplates: [platform-slo]     # analysis templates installed outside this repository
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from headway.check.manifest import normalize_repo_url

__all__ = ["CONFIG_FILES", "CheckConfig", "ConfigError", "parse_config"]

CONFIG_FILES = (".headway/check.yaml", "headway-check.yaml")
_KEYS = {"disable", "repositories", "selfURLs", "health", "externalTemplates"}


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class CheckConfig:
    disable: tuple[str, ...] = ()
    repositories: dict[str, str] = field(default_factory=dict)
    self_urls: tuple[str, ...] = ()
    health: frozenset[str] = frozenset()
    external_templates: frozenset[str] = frozenset()


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
    )
