"""`python -m headway.conformance ARGO_CD_DIR ARGO_ROLLOUTS_DIR` (what scripts/conformance runs)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from headway.conformance.argo_cd_health import run_health_tables
from headway.conformance.argo_rollouts_assessment import run_assessment_tables
from headway.conformance.argo_rollouts_conditions import run_condition_tables
from headway.conformance.expr_lang_builtins import run_builtin_tables
from headway.conformance.tables import TableResult, render

__all__ = ["main"]

_EXPECTED = {
    "ARGO_CD_DIR": "resource_customizations",
    "ARGO_ROLLOUTS_DIR": "utils/evaluate",
    "--expr-lang": "builtin",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scripts/conformance",
        description="Run Argo CD's and Argo Rollouts' own test tables (from local checkouts) "
        "against Headway and print the match rate of each table.",
    )
    parser.add_argument(
        "argo_cd",
        metavar="ARGO_CD_DIR",
        type=Path,
        help="a checkout of github.com/argoproj/argo-cd",
    )
    parser.add_argument(
        "argo_rollouts",
        metavar="ARGO_ROLLOUTS_DIR",
        type=Path,
        help="a checkout of github.com/argoproj/argo-rollouts",
    )
    parser.add_argument(
        "--expr-lang",
        metavar="EXPR_DIR",
        type=Path,
        help="also run expr-lang's builtin tables from a checkout of github.com/expr-lang/expr",
    )
    parser.add_argument(
        "--differences", action="store_true", help="list every case where Headway differs, and why"
    )
    return parser


def _check_layout(parser: argparse.ArgumentParser, name: str, directory: Path) -> None:
    wanted = directory / _EXPECTED[name]
    if not wanted.is_dir():
        parser.error(f"{name} {directory}: no {_EXPECTED[name]}/ there; is it a checkout?")


def _results(argo_cd: Path, argo_rollouts: Path, expr_lang: Path | None) -> Iterator[TableResult]:
    yield from run_health_tables(argo_cd)
    yield from run_condition_tables(argo_rollouts)
    yield from run_assessment_tables(argo_rollouts)
    if expr_lang is not None:
        yield from run_builtin_tables(expr_lang)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    _check_layout(parser, "ARGO_CD_DIR", args.argo_cd)
    _check_layout(parser, "ARGO_ROLLOUTS_DIR", args.argo_rollouts)
    if args.expr_lang is not None:
        _check_layout(parser, "--expr-lang", args.expr_lang)
    results = list(_results(args.argo_cd, args.argo_rollouts, args.expr_lang))
    for line in render(results, show_differences=args.differences):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
