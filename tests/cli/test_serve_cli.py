"""`arena serve` starts a real server process that answers over HTTP."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import free_port


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
        deadline = time.monotonic() + 20
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
