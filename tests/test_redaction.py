"""`headway.redaction`: what is masked, and what is left alone (issue 16, item 5)."""

from __future__ import annotations

import logging

import pytest

from headway.redaction import Redactor, redact_log_record, redact_url_credentials


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("reach https://bot:glpat-x1@git.example.com/a.git", "https://***@git.example.com/a.git"),
        ("https://ghp_tokenonly@github.com/o/r", "https://***@github.com/o/r"),
        ("'http://u:p@h:8080/x'", "'http://***@h:8080/x'"),
        ("ssh://git@github.com/o/r.git", "ssh://git@github.com/o/r.git"),
        ("ssh://git:pw@host/r", "ssh://***@host/r"),
        ("git@github.com:o/r.git", "git@github.com:o/r.git"),
        ("https://github.com/o/r (ops@example.com)", "https://github.com/o/r (ops@example.com)"),
    ],
)  # fmt: skip
def test_url_credentials(text: str, shown: str) -> None:
    assert redact_url_credentials(text).endswith(shown)


def test_secret_values_are_masked_in_nested_values_also_url_encoded() -> None:
    redactor = Redactor.of(["s3cr3t/+value", "1"])
    measured = {"value": "[0.1]", "metadata": {"q": "x{t='s3cr3t/+value'}"}}
    status = {
        "message": "GET http://h/q?t=s3cr3t%2F%2Bvalue: HTTP 500",
        "metricResults": [{"measurements": [measured]}],
    }
    masked = redactor.value(status)
    assert masked["message"] == "GET http://h/q?t=***: HTTP 500"
    measurement = masked["metricResults"][0]["measurements"][0]
    assert measurement["metadata"]["q"] == "x{t='***'}"
    assert measurement["value"] == "[0.1]"  # a one-character "secret" is not masked


def test_log_records_lose_credentials_in_message_and_traceback() -> None:
    try:
        raise RuntimeError("fetch https://u:pw-123@h/r failed")
    except RuntimeError:
        import sys

        info = sys.exc_info()
    record = logging.LogRecord("t", logging.ERROR, "f", 1, "at %s", ("https://u:pw-123@h",), info)
    redact_log_record(record)
    assert record.getMessage() == "at https://***@h"
    assert record.exc_text is not None and "pw-123" not in record.exc_text
    assert "https://***@h/r" in record.exc_text
