"""`arena serve` starts a real server process that answers over HTTP."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.ports import free_port


def test_arena_serve_runs_a_server(tmp_path: Path) -> None:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    port = free_port()
    database = f"sqlite+aiosqlite:///{tmp_path / 'served.db'}"
    process = subprocess.Popen(
        [exe, "serve", "--port", str(port), "--database", database],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        # Start-up takes a second or two; the margin is for a machine loaded by other work.
        deadline = time.monotonic() + 60
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        assert response.json()["status"] == "ok"
        assert (tmp_path / "served.db").exists()
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=10)
    assert f"http://127.0.0.1:{port}" in output


def test_bad_port_is_a_clear_error() -> None:
    from typer.testing import CliRunner

    from cli.main import create_cli

    result = CliRunner().invoke(create_cli(), ["serve", "--port", "70000"])
    assert result.exit_code == 2
    assert "port" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_a_port_in_use_is_said_at_once_with_what_to_do(tmp_path: Path) -> None:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [
                exe,
                "serve",
                "--port",
                str(port),
                "--database",
                f"sqlite+aiosqlite:///{tmp_path}/x.db",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2
    assert f"port {port} is in use on 127.0.0.1; try --port {port + 1}" in done.stderr
    # Said before anything else: no banner promising a server, no traceback.
    assert "Arena on" not in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_serve_help_lists_every_setting() -> None:
    from typer.testing import CliRunner

    from cli.main import create_cli
    from server.settings import all_settings

    result = CliRunner().invoke(create_cli(), ["serve", "--help"], terminal_width=200)
    assert result.exit_code == 0
    settings = list(all_settings())
    assert len(settings) > 80
    for setting in settings:
        assert f"{setting.variable} [" in result.stdout, setting.name
    assert "ARENA_GRADER_PYTHON [/usr/bin/python3]" in result.stdout


def test_port_zero_serves_on_a_free_port_the_banner_names(tmp_path: Path) -> None:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    process = subprocess.Popen(
        [exe, "serve", "--port", "0", "--database", f"sqlite+aiosqlite:///{tmp_path}/z.db"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        url = first.split()[2]
        assert first.startswith("Arena on http://127.0.0.1:") and not url.endswith(":0"), first
        # Start-up takes a second or two; the margin is for a machine loaded by other work.
        deadline = time.monotonic() + 60
        while True:
            try:
                assert httpx.get(f"{url}/health", timeout=1).json()["status"] == "ok"
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    finally:
        process.terminate()
        process.communicate(timeout=10)
