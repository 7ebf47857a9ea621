"""Condition language: compile cost, evaluate cost, and a native-Python baseline, same run.

    .venv/bin/python bench/bench_conditions.py

For each typical condition it prints microseconds per compile, per evaluation of the compiled
program, per compile+evaluate (what a controller that never caches would pay), and per native
Python lambda doing the same test. Ratios, not absolute numbers, are the claim: they hold on
any machine because all four are measured in the same process.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from _timing import per_call_us
from headway.expr import compile_condition

CASES: list[tuple[str, Callable[[Any], bool], Any]] = [
    ("result[0] < 0.02", lambda r: r[0] < 0.02, [0.013]),
    ("len(result) > 0 && result[0] < 0.01", lambda r: len(r) > 0 and r[0] < 0.01, [0.004]),
    ("default(result, 0) < 0.8", lambda r: (0 if r is None else r) < 0.8, 0.42),
    ("isNaN(result) || result >= 0.95", lambda r: math.isnan(r) or r >= 0.95, 0.97),
    ("all(result, {# < 0.5})", lambda r: all(x < 0.5 for x in r), [0.1, 0.2, 0.3, 0.4]),
    (
        "result.status == 'ok' && asFloat(result.p99) < 250",
        lambda r: r["status"] == "ok" and float(r["p99"]) < 250,
        {"status": "ok", "p99": "212.5"},
    ),
]


BUDGET_S = 0.25  # seconds per measured call site


def main() -> None:
    compile_condition("1")  # build the parser once, outside the measurements
    header = f"{'condition':<52} {'compile':>9} {'eval':>8} {'both':>9} {'python':>8}"
    print(header + f" {'both/eval':>10} {'eval/python':>12}")
    for text, native, result in CASES:
        program = compile_condition(text)
        env = {"result": result}
        assert program.evaluate(env) == native(result), text
        compile_us = per_call_us(lambda t=text: compile_condition(t), BUDGET_S)
        eval_us = per_call_us(lambda p=program, e=env: p.evaluate(e), BUDGET_S)
        both_us = per_call_us(lambda t=text, e=env: compile_condition(t).evaluate(e), BUDGET_S)
        python_us = per_call_us(lambda f=native, r=result: f(r), BUDGET_S)
        print(
            f"{text:<52} {compile_us:>8.1f}µ {eval_us:>7.2f}µ {both_us:>8.1f}µ {python_us:>7.3f}µ"
            f" {both_us / eval_us:>9.0f}x {eval_us / python_us:>11.1f}x"
        )


if __name__ == "__main__":
    main()
