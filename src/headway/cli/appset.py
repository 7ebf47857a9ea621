"""`headway appset generate FILE`: the Applications an ApplicationSet generates, rendered from
the checkout as `headway check` renders it (git generators read this repository, or one
mapped in `.headway/check.yaml`; the clusters generator reads the cluster Secrets of FILE and
the local cluster). Nothing is written anywhere.

Exit status: 0 with the Applications on stdout (YAML or JSON), 1 when a set cannot be
generated (each problem on stderr as `file:line: ApplicationSet/name: field: message`), 2 for
bad usage.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from headway.cli.check import UsageError, build_loader, load_config
from headway.model.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from headway.controllers.appset.inputs import TreeInputs
    from headway.model.yamlload import Document

# The generators, the loader and YAML load in `generate`, not for --help.

__all__ = ["register"]

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2

appset_app = typer.Typer(
    help="ApplicationSets: the Applications a set generates from this checkout (generate).",
    no_args_is_help=True,
)


class OutputFormat(StrEnum):
    YAML = "yaml"
    JSON = "json"


@appset_app.command("generate")
def generate(
    file: Annotated[Path, typer.Argument(help="A file holding one or more ApplicationSets.")],
    repo: Annotated[
        Path, typer.Option("--repo", help="The checkout git generators read (default: .).")
    ] = Path("."),
    output: Annotated[OutputFormat, typer.Option("--output", "-o", help="yaml or json.")] = (
        OutputFormat.YAML
    ),
) -> None:
    """Print the Applications the ApplicationSets of FILE generate, from the checkout."""
    import yaml

    from headway.appset.documents import is_application_set
    from headway.cli.check_loader import cluster_secrets_in
    from headway.controllers.appset.inputs import TreeInputs
    from headway.model.yamlload import load_documents

    try:
        text = file.read_text(encoding="utf-8")
        config, config_dir = load_config(repo, None)
        loader, _ = build_loader(repo, revision=None, config=config, config_dir=config_dir)
    except (OSError, UnicodeDecodeError) as err:
        typer.echo(f"error: {file}: {err}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    except UsageError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    loaded = load_documents(text, str(file))
    if not any(is_application_set(d) for d in loaded.documents) and loaded.diagnostics:
        for problem in loaded.diagnostics:  # a YAML error hides the sets: say it, at its line
            typer.echo(str(problem), err=True)
        raise typer.Exit(EXIT_ERRORS)
    if not any(is_application_set(d) for d in loaded.documents):
        typer.echo(f"error: {file} holds no argoproj.io ApplicationSet", err=True)
        raise typer.Exit(EXIT_USAGE)
    inputs = TreeInputs(
        tree_for=loader.generator_tree, secrets=cluster_secrets_in(loaded.documents)
    )
    problems: list[Diagnostic] = list(loaded.diagnostics)
    apps: list[Any] = []
    for document in filter(is_application_set, loaded.documents):
        generated, said = _generate_one(document, inputs)
        apps.extend(generated)
        problems.extend(said)
    for problem in problems:
        typer.echo(str(problem), err=True)
    if output is OutputFormat.JSON:
        typer.echo(json.dumps(apps, indent=2))
    else:
        typer.echo(yaml.safe_dump_all(apps, sort_keys=False).rstrip("\n"))
    failed = any(p.severity is not Severity.INFO for p in problems)
    raise typer.Exit(EXIT_ERRORS if failed else EXIT_OK)


def _generate_one(document: Document, inputs: TreeInputs) -> tuple[list[Any], list[Diagnostic]]:
    """One set's Applications and what stopped or emptied it: its own invalid fields (which
    `headway validate` reports too), a generation problem, or a note that it made none."""
    from headway.appset.documents import render_documents
    from headway.model.applicationset import parse_application_set

    _, diagnostics = parse_application_set(document)
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if errors:
        return [], errors
    rendered = render_documents([document], inputs, missing_inputs=Severity.ERROR)
    said = [*rendered.diagnostics, *rendered.run_time_only]
    if not rendered.applications and not said:
        note = "generated no Applications (an empty list, or a selector nothing matches)"
        said.append(document.diagnostic(("spec", "generators"), note, Severity.INFO))
    return [d.obj for d in rendered.applications], said


def register(app: typer.Typer) -> None:
    app.add_typer(appset_app, name="appset")
