"""Keeping credentials out of what a person or a log sees. Pure.

Two kinds of secret reach text Headway writes:

* credentials inside a URL — `https://user:token@git.example.com/team/repo.git` as an
  Application's `repoURL`, echoed by Git errors, conditions, events and CLI output; the whole
  user-info part becomes `***` (`https://***@git.example.com/...`: a token is often the user
  name, so the user name goes too). An `ssh://` user name alone (`ssh://git@host/...`) stays:
  SSH authenticates with keys, and the user name is no secret;
* values an AnalysisRun resolved from `secretKeyRef` arguments, substituted into a web URL, a
  header or a Prometheus query and so echoed by measurement and run messages and by the
  resolved query; each occurrence becomes `***`. Values shorter than `MIN_SECRET_LENGTH` are
  left alone: masking a secret `1` would turn the measured value `0.1` into `0.***` and
  protect nothing.

The edges that write status, events, logs and CLI output call this module; nothing else
decides what is a secret.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

__all__ = [
    "MASK",
    "MIN_SECRET_LENGTH",
    "Redactor",
    "install_log_redaction",
    "redact_log_record",
    "redact_url_credentials",
    "redact_urls_in",
]

MASK = "***"
MIN_SECRET_LENGTH = 4
# scheme://user-info@ — user-info has no '/', '@' or whitespace (RFC 3986 section 3.2.1)
_URL_USER_INFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>[^/@\s'\"]+)@")


def redact_url_credentials(text: str) -> str:
    """`text` with the user-info of every URL in it replaced by `***`."""
    if "@" not in text:
        return text

    def mask(match: re.Match[str]) -> str:
        scheme, info = match.group("scheme"), match.group("info")
        if scheme.lower().startswith("ssh") and ":" not in info:
            return match.group(0)
        return f"{scheme}{MASK}@"

    return _URL_USER_INFO.sub(mask, text)


def _walk(value: Any, text: Any) -> Any:
    if isinstance(value, str):
        return text(value)
    if isinstance(value, Mapping):
        return {key: _walk(item, text) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(item, text) for item in value]
    return value


def redact_urls_in(value: Any) -> Any:
    """A copy of a status, event or other JSON-like value with URL credentials masked."""
    return _walk(value, redact_url_credentials)


@dataclass(frozen=True)
class Redactor:
    """Masks known secret values (and URL credentials) in text and JSON-like values."""

    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: Iterable[str]) -> Redactor:
        forms: set[str] = set()
        for value in values:
            if len(value) >= MIN_SECRET_LENGTH:
                forms.update({value, quote(value, safe=""), quote(value, safe="/:")})
        # longest first, so a secret containing another is masked whole
        return cls(tuple(sorted(forms, key=lambda s: (-len(s), s))))

    def text(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return redact_url_credentials(text)

    def value(self, value: Any) -> Any:
        """A copy of `value` with every string in it redacted."""
        return _walk(value, self.text)


def redact_log_record(record: logging.LogRecord) -> logging.LogRecord:
    """The record with URL credentials masked in its message and its traceback (formatted
    now; a formatter reuses `exc_text` when it is set)."""
    message = record.getMessage()
    redacted = redact_url_credentials(message)
    if redacted != message:
        record.msg, record.args = redacted, None
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact_url_credentials(record.exc_text)
    return record


def install_log_redaction() -> None:
    """Mask URL credentials in every log record of this process, whatever handler (or
    Python's last-resort handler) emits it: done where records are made. Idempotent."""
    current = logging.getLogRecordFactory()
    if getattr(current, "headway_redacts", False):
        return

    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        return redact_log_record(current(*args, **kwargs))

    make.headway_redacts = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(make)
