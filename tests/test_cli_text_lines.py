"""`cli.text_lines`: the plain text printed without Rich is byte for byte what Rich prints
(with emoji codes off) to a stream that is no terminal, and Rich takes over where it would
not be."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from headway.cli import text_lines
from headway.cli.text_lines import Line, plain_width, print_lines, prints_plain

# Text that exercises what Rich treats specially: markup brackets and backslashes, emoji
# codes, tabs, control characters, wide and non-ASCII characters, newlines, spaces.
_ALPHABET = st.sampled_from(
    [*"ab:[]/\\ #@=.-_", "\t", "\n", "\r", "\x07", "\x1b", "é", "界", "💯", "1", "0"]
)
_TEXT = st.text(_ALPHABET, max_size=40) | st.sampled_from(
    [":100:", "x.yaml:100: error", "a:b:c", "[bold]x[/bold]", "[/]", "\\[x]", "x\\", ":smile:"]
)
_STYLE = st.sampled_from(["", "dim", "red", "bold red", "yellow", "blue"])
_LINE = st.builds(
    Line,
    st.lists(st.tuples(_TEXT, _STYLE), min_size=1, max_size=4).map(tuple),
    st.booleans(),
)


def rich_prints(lines: list[Line], width: int) -> str:
    """What Rich prints of the lines' pieces as styled text (built here, not by `Line`)."""
    out = io.StringIO()
    console = Console(file=out, highlight=False, emoji=False, width=width)
    for line in lines:
        text = Text()
        for piece, style in line.pieces:
            text.append(piece, style)
        console.print(text, soft_wrap=line.soft_wrap, highlight=False, emoji=False)
    return out.getvalue()


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_LINE, max_size=5))
def test_what_is_printed_plain_is_what_rich_prints(
    lines: list[Line], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("TTY_COMPATIBLE", "FORCE_COLOR", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    out = io.StringIO()
    print_lines(lines, stream=out)
    assert out.getvalue() == rich_prints(lines, plain_width({}))


def test_ordinary_reports_are_printed_without_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain path is the one taken for a report's usual lines (else the test above
    would compare Rich with itself)."""
    for name in ("TTY_COMPATIBLE", "FORCE_COLOR", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    lines = [
        Line((("r.yaml:100:", "dim"), (" error: Rollout/x: [bad] value", "red"))),
        Line.of("1 file, 1 object: 1 error, 0 warnings", soft_wrap=False),
    ]
    assert text_lines._all_plain(lines, 80)
    assert prints_plain(io.StringIO(), {})
    out = io.StringIO()
    print_lines(lines, stream=out)
    assert out.getvalue() == (
        "r.yaml:100: error: Rollout/x: [bad] value\n1 file, 1 object: 1 error, 0 warnings\n"
    )


def test_rich_takes_over_where_it_would_rewrite_a_line() -> None:
    assert not text_lines._all_plain([Line.of("a\tb")], 80)
    assert not text_lines._all_plain([Line.of("x" * 80, soft_wrap=False)], 80)
    assert not text_lines._all_plain([Line.of("wide 界", soft_wrap=False)], 80)
    assert text_lines._all_plain([Line.of("wide 界 " * 30)], 80)  # soft-wrapped: never cut


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_terminal_test_follows_richs_order() -> None:
    plain, terminal = io.StringIO(), _Terminal()
    for stream, environ in [
        (plain, {}),
        (terminal, {"TTY_COMPATIBLE": "0"}),
        (terminal, {"FORCE_COLOR": ""}),
        (plain, {"TTY_COMPATIBLE": "2", "FORCE_COLOR": ""}),
    ]:
        assert prints_plain(stream, environ) == (
            not Console(file=stream, _environ=environ).is_terminal
        )
        assert prints_plain(stream, environ)
    for stream, environ in [
        (terminal, {}),
        (plain, {"TTY_COMPATIBLE": "1"}),
        (plain, {"FORCE_COLOR": "1"}),
    ]:
        assert Console(file=stream, _environ=environ).is_terminal
        assert not prints_plain(stream, environ)


def test_a_terminal_gets_rich_colours() -> None:
    out = _Terminal()
    lines = [Line((("f.yaml:3:", "dim"), (" error: x", "red")))]
    text_lines.print_lines(lines, stream=out)
    assert "\x1b[" in out.getvalue()  # styled by Rich
    assert "f.yaml" in out.getvalue() and ":3:" in out.getvalue()


def test_a_terminal_prints_brackets_and_backslashes_as_written() -> None:
    """On a terminal every line goes through Rich; none of it is read as markup. (Built as
    markup, `\\[` lost its backslash under Rich 15, and `[bold]` would have styled.)"""
    written = "dir\\[x]/a\\[ [bold]y[/bold] \\\\[z] end\\"
    out = _Terminal()
    text_lines.print_lines([Line((("f.yaml:3:", "dim"), (written, "red")))], stream=out)
    unstyled = re.sub("\x1b\\[[0-9;]*m", "", out.getvalue())
    assert unstyled == f"f.yaml:3:{written}\n"


ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: x
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers: [{name: x, image: x}]
  strategy:
    canary:
      steps:
      - pause: {duration: tenminutes}
"""


@pytest.mark.parametrize("color", [False, True])
def test_a_problem_on_line_100_keeps_its_line_number(tmp_path: Path, color: bool) -> None:
    """Rich read `r.yaml:100:` as the emoji code `:100:` and printed `r.yaml💯`."""
    path = tmp_path / "r.yaml"
    path.write_text("# padding\n" * 86 + ROLLOUT)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    if color:
        env["FORCE_COLOR"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "headway", "validate", str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "💯" not in done.stdout
    assert "r.yaml:100:" in done.stdout.replace(str(tmp_path) + "/", "")


@pytest.mark.parametrize("command", ["validate", "check"])
def test_a_report_to_a_closed_output_prints_nothing_and_keeps_its_status(
    tmp_path: Path, command: str
) -> None:
    """`headway validate FILE >&-` (Python then has no `sys.stdout`): Rich wrote nowhere and
    the status was the report's; the plain path raised AttributeError with a traceback."""
    path = tmp_path / "r.yaml"
    path.write_text(ROLLOUT)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    target = path if command == "validate" else tmp_path  # `check` reads a directory
    line = [sys.executable, "-m", "headway", command, str(target)]
    shown = subprocess.run(line, capture_output=True, text=True, env=env, check=False)
    closed = subprocess.run(
        ["/bin/sh", "-c", '"$@" >&-', "sh", *line],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert shown.returncode == 1, shown.stderr
    assert "tenminutes" in shown.stdout  # the report has lines to print
    assert (closed.returncode, closed.stderr) == (shown.returncode, "")
