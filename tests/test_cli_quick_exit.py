"""`headway check`, run as the program, leaves without tearing its heap down (cli/quick_exit.py):
the collector stays off for the command, every `atexit` callback runs, the interpreter's
finalization does not; and every case the ordinary exit must handle still takes it. Each
case in a new interpreter through `entry.run()`, as the console script and
`python -m headway` run it, with a probe that says what ran: an `atexit` callback (which also
reports whether the collector was on) and an object whose `__del__` runs only when the
interpreter tears its modules down."""

from __future__ import annotations

import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from headway.cli import quick_exit

PROBE = """
import atexit, gc, sys, threading, time
from headway.cli import entry
atexit.register(lambda: print(f"atexit ran; collector on: {gc.isenabled()}", file=sys.stderr))
class Late:
    def __del__(self):
        print("teardown ran", file=sys.stderr)
keep = Late()
if sys.argv[1] == "--with-thread":
    del sys.argv[1]
    threading.Thread(target=time.sleep, args=(2.0,)).start()
sys.argv = ["headway", *sys.argv[1:]]
entry.run()
"""

APP = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://example.com/repo.git, path: web, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: web}
"""


def probe(cwd: Path, *argv: str, snippet: str = PROBE) -> subprocess.CompletedProcess[str]:
    """`snippet` (by default the probe through `entry.run()`) in a new interpreter."""
    return subprocess.run(
        [sys.executable, "-c", snippet, *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=os.environ.copy(),
        timeout=120,
        check=False,
    )


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "web.yaml").write_text(APP)
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "config.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n"
    )
    return tmp_path


ORDINARY = """
import sys
from headway.cli import entry
sys.argv = ["headway", *sys.argv[1:]]
entry.main()
"""


def ordinary(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The same command through `entry.main()`, which exits the ordinary way."""
    return probe(cwd, *argv, snippet=ORDINARY)


@pytest.mark.parametrize("output", ["json", "text", "sarif"])
def test_check_leaves_with_every_line_and_its_status_and_no_teardown(
    repository: Path, output: str
) -> None:
    done = probe(repository, "check", "-o", output, ".")
    assert "atexit ran; collector on: False" in done.stderr
    assert "teardown ran" not in done.stderr
    expected = ordinary(repository, "check", "-o", output, ".")
    assert expected.returncode == 1, expected.stderr  # the fixture's app has findings
    assert (done.stdout, done.returncode) == (expected.stdout, expected.returncode)
    assert "HW301" in done.stdout


def test_a_usage_error_of_check_leaves_quickly_with_status_2(tmp_path: Path) -> None:
    done = probe(tmp_path, "check", str(tmp_path / "missing"))
    assert done.returncode == 2
    assert "is not a directory" in done.stderr
    assert "atexit ran" in done.stderr
    assert "teardown ran" not in done.stderr


@pytest.mark.parametrize(
    "argv", [["check", "--help"], ["--version"], ["validate", "."], ["app", "list", "--help"]]
)
def test_other_commands_take_the_ordinary_exit(repository: Path, argv: list[str]) -> None:
    done = probe(repository, *argv)
    assert done.returncode == 0, done.stderr
    assert "atexit ran; collector on: True" in done.stderr
    assert "teardown ran" in done.stderr


def test_a_running_thread_makes_check_take_the_ordinary_exit(repository: Path) -> None:
    """The interpreter waits for a non-daemon thread; a quick exit would cut it off."""
    done = probe(repository, "--with-thread", "check", "-o", "json", ".")
    assert done.returncode == 1, done.stderr
    assert "teardown ran" in done.stderr


def test_in_process_callers_are_left_alone() -> None:
    """A test's runner or a library caller: `one_shot` changes nothing, `leave` raises."""
    import gc

    assert gc.isenabled()
    assert quick_exit.one_shot() is False
    assert gc.isenabled()
    with pytest.raises(SystemExit) as done:
        quick_exit.leave(3)
    assert done.value.code == 3

    class Loaded:
        pass

    loaded = Loaded()
    gone = weakref.ref(loaded)
    quick_exit.keep_until_exit(loaded)
    del loaded
    assert gone() is None  # freed as usual


KEPT = """
import weakref
from headway.cli import quick_exit
class Loaded:
    pass
quick_exit.running_as_program()
quick_exit.one_shot()
loaded = Loaded()
alive = weakref.ref(loaded)
quick_exit.keep_until_exit(loaded)
del loaded
print("kept" if alive() is not None else "freed")
"""


def test_what_a_one_shot_command_is_done_with_is_kept_to_the_end() -> None:
    done = subprocess.run(
        [sys.executable, "-c", KEPT], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == "kept\n"


LEAVE = """
import atexit, sys
from headway.cli import quick_exit
class Late:
    def __del__(self):
        print("teardown ran", file=sys.stderr)
keep = Late()
quick_exit.running_as_program()
quick_exit.one_shot()
if sys.argv[1] == "broken-pipe":
    class Closed:
        def write(self, text): return len(text)
        def flush(self): raise BrokenPipeError(32, "Broken pipe")
    sys.stdout = Closed()
    quick_exit.leave(0)
quick_exit.leave("a message instead of a status")
"""


@pytest.mark.parametrize("case", ["broken-pipe", "message"])
def test_what_the_ordinary_exit_reports_takes_the_ordinary_exit(case: str) -> None:
    """A closed pipe (Python reports it and exits 120) and a message for a status (printed,
    status 1) are left to Python."""
    done = subprocess.run(
        [sys.executable, "-c", LEAVE, case],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "teardown ran" in done.stderr
    if case == "message":
        assert done.returncode == 1
        assert "a message instead of a status" in done.stderr
    else:
        assert done.returncode == 120
