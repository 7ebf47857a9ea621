"""`headway analysis ...`: see what an AnalysisTemplate decides, without running anything.

    headway analysis evaluate TEMPLATE.yaml --metric error-rate --value '[0.31]'

prints the phase Headway's analysis controller would record (Successful, Failed, Inconclusive
or Error) and why — computed by the controller's own `headway_outcome`, so the empty-result
rule (`onEmpty`) and the non-finite rule (`onNonFinite`) apply — then, when Argo Rollouts
would record another phase, Argo's. Exit status follows Headway's verdict: 0 for Successful,
1 for any other phase, 2 for bad usage (a missing file or metric, a `--value` that is not
JSON, a condition that is not a string, an unknown `onEmpty` or `onNonFinite`).

`analysis_app` is the `analysis` sub-command group; `headway analysis run` joins it later.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from headway.cli import analysis_run
from headway.cli.manifest_input import read_documents, usage_error

if TYPE_CHECKING:  # the analysis core (and the condition language) loads in `evaluate`
    from headway.analysis.measurement import MeasurementOutcome
    from headway.model.yamlload import Document

__all__ = ["analysis_app", "register"]

EXIT_SUCCESSFUL, EXIT_NOT_SUCCESSFUL, EXIT_USAGE = 0, 1, 2

analysis_app = typer.Typer(
    name="analysis",
    help="Analysis: what a measured result decides (evaluate), and a template run once "
    "against its real providers (run).",
    no_args_is_help=True,
)


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


@dataclass(frozen=True)
class _MetricSpec:
    document: Document
    index: int
    spec: dict[str, Any]

    @property
    def owner(self) -> str:
        return f"{self.document.kind or 'document'}/{self.document.name or '?'}"


def _metrics_of(document: Document) -> list[_MetricSpec]:
    spec = document.obj.get("spec") if isinstance(document.obj, dict) else None
    metrics = spec.get("metrics") if isinstance(spec, dict) else None
    if not isinstance(metrics, list):
        return []
    return [_MetricSpec(document, i, m) for i, m in enumerate(metrics) if isinstance(m, dict)]


def _find_metric(
    documents: list[Document], name: str, template: str | None, file: Path
) -> _MetricSpec:
    candidates = [
        metric
        for document in documents
        if template is None or document.name == template
        for metric in _metrics_of(document)
    ]
    matches = [metric for metric in candidates if metric.spec.get("name") == name]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        known = ", ".join(f"{m.spec.get('name')} ({m.owner})" for m in candidates) or "none"
        scope = f" of template {template}" if template else ""
        raise usage_error(f"no metric named {name!r} in {file}{scope}; metrics: {known}")
    places = ", ".join(f"{m.owner} (line {m.document.line})" for m in matches)
    raise usage_error(
        f"metric {name!r} is defined in several documents: {places}; choose with --template NAME"
    )


def _condition(metric: _MetricSpec, field: str) -> str:
    value = metric.spec.get(field, "")
    if value is None or isinstance(value, str):
        return value or ""
    path = ("spec", "metrics", metric.index, field)
    raise usage_error(str(metric.document.diagnostic(path, f"{field} must be a string")))


def _mode(metric: _MetricSpec, field: str, modes: tuple[str, ...]) -> str | None:
    """A Headway mode field (`onEmpty`, `onNonFinite`), checked against its values."""
    value = metric.spec.get(field)
    if value is None or value in modes:
        return value if isinstance(value, str) else None
    path = ("spec", "metrics", metric.index, field)
    problem = f"{field} must be one of {', '.join(modes)}, not {value!r}"
    raise usage_error(str(metric.document.diagnostic(path, problem)))


def _query(metric: _MetricSpec) -> str:
    """What the metric asks, for the empty-result message: a query, or a web metric's URL."""
    from headway.check.analysis_rules import query_of

    provider = metric.spec.get("provider")
    web = provider.get("web") if isinstance(provider, dict) else None
    url = web.get("url") if isinstance(web, dict) else None
    return query_of(metric.spec) or (url if isinstance(url, str) else "")


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise usage_error(f"--value is not valid JSON ({err}): {_shortened(text)}") from None
    except ValueError:  # the only other ValueError: an integer past Python's digit limit
        limit = sys.get_int_max_str_digits()
        raise usage_error(f"--value has an integer of more than {limit} digits") from None
    except RecursionError:
        raise usage_error("--value is nested too deeply") from None


def _shortened(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _as_json(outcome: MeasurementOutcome) -> dict[str, str]:
    return {"phase": str(outcome.phase), "message": outcome.message}


def _print(headway: MeasurementOutcome, argo: MeasurementOutcome, output: OutputFormat) -> None:
    """Headway's verdict first; Argo's beside it (always in JSON, in text when it differs)."""
    if output is OutputFormat.JSON:
        typer.echo(json.dumps({**_as_json(headway), "argo": _as_json(argo)}))
        return
    typer.echo(f"{headway.phase}: {headway.message}")
    if argo.phase is not headway.phase:
        typer.echo(f"Argo Rollouts would record {argo.phase}: {argo.message}")


@analysis_app.command("evaluate")
def evaluate(
    template: Annotated[
        Path, typer.Argument(help="AnalysisTemplate YAML (several documents allowed).")
    ],
    metric: Annotated[str, typer.Option("--metric", "-m", help="The metric's name.")],
    value: Annotated[
        str,
        typer.Option(
            "--value",
            help="The measured result as JSON: '[0.31]' for a Prometheus vector, "
            "'0.31' for a scalar, '[]' for no data.",
        ),
    ],
    template_name: Annotated[
        str | None,
        typer.Option("--template", help="Pick the document by metadata.name when several match."),
    ] = None,
    output: Annotated[
        OutputFormat, typer.Option("--format", "-o", help="text or json.")
    ] = OutputFormat.TEXT,
) -> None:
    """What one measured result decides: Headway's phase, and Argo Rollouts' when it differs."""
    result = _parse_value(value)
    found = _find_metric(read_documents(template), metric, template_name, template)
    # The analysis core (and the condition language) loads once the input is known good.
    from headway.analysis.measurement import (
        MeasurementPhase,
        compile_metric_conditions,
        measurement_outcome,
    )
    from headway.analysis.verdict import ON_EMPTY_MODES, ON_NON_FINITE_MODES, headway_outcome

    conditions = compile_metric_conditions(
        metric,
        success_condition=_condition(found, "successCondition"),
        failure_condition=_condition(found, "failureCondition"),
    )
    outcome = headway_outcome(
        conditions,
        result,
        on_empty=_mode(found, "onEmpty", ON_EMPTY_MODES),
        query=_query(found),
        on_non_finite=_mode(found, "onNonFinite", ON_NON_FINITE_MODES),
    )
    _print(outcome, measurement_outcome(conditions, result), output)
    successful = outcome.phase is MeasurementPhase.SUCCESSFUL
    raise typer.Exit(EXIT_SUCCESSFUL if successful else EXIT_NOT_SUCCESSFUL)


analysis_app.command("run")(analysis_run.run_command)


def register(app: typer.Typer) -> None:
    app.add_typer(analysis_app, name="analysis")
