"""One table's tally (cases matched, cases that differ, cases that could not be read) and the
report that lists them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["Case", "TableResult", "render"]


@dataclass(frozen=True)
class Case:
    """One upstream case: what Argo expects and what Headway gave."""

    name: str
    expected: str
    actual: str

    @property
    def matched(self) -> bool:
        return self.expected == self.actual


@dataclass(frozen=True)
class TableResult:
    """The cases of one upstream table; `unreadable` are cases the runner could not extract."""

    suite: str
    table: str
    cases: tuple[Case, ...] = ()
    unreadable: tuple[str, ...] = field(default_factory=tuple)

    @property
    def matched(self) -> int:
        return sum(case.matched for case in self.cases)

    @property
    def total(self) -> int:
        return len(self.cases)


def _rate(matched: int, total: int) -> str:
    percent = f"{100 * matched / total:.1f}%" if total else "-"
    return f"{matched}/{total} ({percent})"


def render(results: Iterable[TableResult], *, show_differences: bool) -> list[str]:
    """Lines of the report: one per table, a total per suite, and optionally each difference."""
    lines: list[str] = []
    by_suite: dict[str, list[TableResult]] = {}
    for result in results:
        by_suite.setdefault(result.suite, []).append(result)
    for suite, tables in by_suite.items():
        lines.append(f"== {suite}")
        width = max(len(table.table) for table in tables)
        for table in tables:
            skipped = f"  ({len(table.unreadable)} not readable)" if table.unreadable else ""
            lines.append(f"  {table.table:<{width}}  {_rate(table.matched, table.total)}{skipped}")
            if show_differences:
                lines.extend(_differences(table))
        matched = sum(table.matched for table in tables)
        total = sum(table.total for table in tables)
        unreadable = sum(len(table.unreadable) for table in tables)
        lines.append(
            f"  total: {_rate(matched, total)} in {len(tables)} tables"
            + (f", {unreadable} cases not readable" if unreadable else "")
        )
    return lines


def _differences(table: TableResult) -> list[str]:
    lines = []
    for case in table.cases:
        if not case.matched:
            lines.append(f"      {case.name}: Argo {case.expected}; Headway {case.actual}")
    lines.extend(f"      not readable: {reason}" for reason in table.unreadable)
    return lines
