"""Output of `headway check`: readable text, JSON, and SARIF 2.1.0 for code-scanning UIs."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import headway
from headway.check.findings import Finding, Rule
from headway.cli.text_lines import Line
from headway.model.diagnostics import Severity

__all__ = ["render_json", "render_sarif", "summary", "text_lines"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "blue"}
_JSON_KEYS = ("rule", "severity", "file", "line", "app", "resource", "message", "hint")


def summary(findings: Sequence[Finding], apps: int) -> str:
    counts = Counter(f.severity for f in findings)
    parts = [f"{counts[s]} {s}{'' if counts[s] == 1 else 's'}" for s in Severity]
    return f"{apps} Application{'' if apps == 1 else 's'} checked: " + ", ".join(parts)


def text_lines(findings: Sequence[Finding], apps: int) -> list[Line]:
    """Three lines per finding (where, rule and resource; the message; the fix), then the
    summary; colours only on a terminal (`text_lines.print_lines`)."""
    lines: list[Line] = []
    for f in findings:
        owner = f" [{f.app}]" if f.app else ""
        head = f" {f.rule} {f.slug}{owner} {f.resource}"
        lines.append(
            Line(((f"{f.file}:{f.line}: ", ""), (str(f.severity), _STYLE[f.severity]), (head, "")))
        )
        lines.append(Line.of(f"    {f.message}"))
        lines.append(Line((("    ", ""), (f"fix: {f.hint}", "dim"))))
    lines.append(Line.of(summary(findings, apps), soft_wrap=False))
    return lines


def render_json(findings: Sequence[Finding]) -> str:
    rows = [{key: f.to_json()[key] for key in _JSON_KEYS} for f in findings]
    return json.dumps(rows, indent=2)


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": rule.slug,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.rationale},
        "help": {"text": rule.hint, "markdown": f"**Fix:** {rule.hint}\n\n{rule.rationale}"},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        "properties": {"tags": ["gitops", "argo"], "problem.severity": str(rule.severity)},
    }


def _sarif_result(finding: Finding, index: dict[str, int]) -> dict[str, Any]:
    return {
        "ruleId": finding.rule,
        "ruleIndex": index[finding.rule],
        "level": _SARIF_LEVEL[finding.severity],
        "message": {"text": f"{finding.message}. Fix: {finding.hint}"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": finding.file, "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": max(1, finding.line)},
                },
                "logicalLocations": [{"name": finding.resource, "kind": "resource"}],
            }
        ],
        "partialFingerprints": {
            "headwayFinding/v1": f"{finding.rule}:{finding.file}:{finding.resource}:{finding.app}"
        },
        "properties": {"app": finding.app, "resource": finding.resource},
    }


def render_sarif(findings: Sequence[Finding], rules: Sequence[Rule]) -> str:
    index = {rule.id: i for i, rule in enumerate(rules)}
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "headway-check",
                        "version": headway.__version__,
                        "rules": [_sarif_rule(r) for r in rules],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "repository root"}}},
                "results": [_sarif_result(f, index) for f in findings],
            }
        ],
    }
    return json.dumps(log, indent=2)
