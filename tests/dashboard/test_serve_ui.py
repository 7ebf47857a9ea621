"""`headway serve --ui-port`: the URL printed, the token printed once and kept hashed, a
non-loopback address warned about, a taken port one line."""

from __future__ import annotations

import hashlib
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import httpx2

from headway.dashboard.access import TOKEN_FILE
from polling import wait_for


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(state: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "headway", "serve", "--state-dir", str(state), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def first_lines(serve: subprocess.Popen[str], wanted: int) -> list[str]:
    assert serve.stdout is not None
    return [serve.stdout.readline().rstrip("\n") for _ in range(wanted)]


def stop(serve: subprocess.Popen[str]) -> str:
    serve.terminate()
    _out, err = serve.communicate(timeout=60)
    assert serve.returncode == 0, err
    return err


def test_serve_prints_the_url_and_the_token_once(tmp_path: Path) -> None:
    state, port = tmp_path / "state", free_port()
    serve = start(state, "--ui-port", str(port))
    try:
        lines = first_lines(serve, 3)
        assert lines[0].startswith("serving ")
        assert lines[1] == f"dashboard at http://127.0.0.1:{port}/"
        assert lines[2].startswith("dashboard token (shown this once;")
        token = lines[2].rsplit(" ", 1)[-1]
        page = wait_for(lambda: httpx2.get(f"http://127.0.0.1:{port}/rollouts", timeout=10),
                        what="the dashboard answering")
        assert page.status_code == 200
        client = httpx2.Client(base_url=f"http://127.0.0.1:{port}", timeout=10)
        assert client.post("/login", data={"token": token}).status_code == 303
    finally:
        stop(serve)
    stored = (state / TOKEN_FILE).read_text().strip()
    assert stored == hashlib.sha256(token.encode()).hexdigest() and token not in stored
    assert stat.S_IMODE((state / TOKEN_FILE).stat().st_mode) == 0o600
    again = start(state, "--ui-port", str(port))
    try:
        lines = first_lines(again, 2)
        assert lines[1] == f"dashboard at http://127.0.0.1:{port}/"
    finally:
        stop(again)
    assert again.stdout is not None


def test_a_second_start_does_not_print_the_token(tmp_path: Path) -> None:
    state, port = tmp_path / "state", free_port()
    printed = []
    for _attempt in range(2):
        serve = start(state, "--ui-port", str(port))
        try:
            first_lines(serve, 2)
            wait_for(lambda: httpx2.get(f"http://127.0.0.1:{port}/", timeout=10),
                     what="the dashboard answering")
        finally:
            serve.terminate()
            serve.wait(timeout=60)
        assert serve.stdout is not None
        printed.append(serve.stdout.read())  # what followed the two lines read (buffered too)
    assert "dashboard token" in printed[0]
    assert "dashboard token" not in printed[1], printed[1]


def test_a_wide_address_is_warned_about(tmp_path: Path) -> None:
    serve = start(tmp_path / "state", "--ui-port", str(free_port()), "--ui-address", "0.0.0.0")
    try:
        first_lines(serve, 2)
    finally:
        err = stop(serve)
    assert "warning: the dashboard listens on 0.0.0.0" in err


def test_a_taken_ui_port_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        serve = start(tmp_path / "state", "--ui-port", str(port))
        out, err = serve.communicate(timeout=60)
    assert serve.returncode == 1, out + err
    assert f"error: cannot start the dashboard (--ui-port {port})" in err
    assert "Traceback" not in err


def test_a_damaged_token_file_is_one_line_naming_it(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / TOKEN_FILE).write_text("not a digest\n")
    serve = start(state, "--ui-port", str(free_port()))
    _out, err = serve.communicate(timeout=60)
    assert serve.returncode == 1
    assert f"error: cannot start the dashboard: {state / TOKEN_FILE}: not a SHA-256" in err
    assert "delete the file" in err and "Traceback" not in err


def test_sigterm_with_an_open_event_stream_ends_it_and_exits_cleanly(tmp_path: Path) -> None:
    port = free_port()
    serve = start(tmp_path / "state", "--ui-port", str(port))
    ended: list[str] = []
    opened = threading.Event()

    def follow() -> None:
        with httpx2.stream("GET", f"http://127.0.0.1:{port}/events", timeout=120) as stream:
            for line in stream.iter_lines():
                if line.startswith(": connected"):
                    opened.set()
        ended.append("the server ended the stream")

    try:
        first_lines(serve, 2)
        reader = threading.Thread(target=follow, daemon=True)
        reader.start()
        assert opened.wait(60), "the stream did not open"
    finally:
        err = stop(serve)  # asserts exit code 0
    reader.join(60)
    assert ended == ["the server ended the stream"]
    assert "Traceback" not in err and "CancelledError" not in err
