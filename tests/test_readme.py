"""Every command README.md marks runnable works, run as a new user runs it.

A code block is runnable when the line before its fence is `<!-- runnable -->` (or
`<!-- runnable: server -->` for commands that need a running server). The blocks run in order,
each as a bash script (`set -euo pipefail`; a Python block with the venv's python) that sees
the variables the blocks before it set, as in one terminal, in one fresh temporary directory
that holds nothing else: no repository, no `../shared`. `arena` is
found on PATH as after `source .venv/bin/activate`. A server block runs against a real
`arena serve` started in that directory on a free port (the README's http://127.0.0.1:8000 is
replaced by its address).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BIN = Path(sys.executable).parent
README_URL = "http://127.0.0.1:8000"
MARKER = re.compile(r"^<!-- runnable(?:: (?P<kind>server))? -->$")
FENCE = re.compile(r"^```(?P<lang>\w*)\s*$")
ENV_FILE = ".readme-session"


@dataclass(frozen=True)
class Block:
    """A runnable block of README.md: its language, text, first line, and if it needs a server."""

    lang: str
    text: str
    line: int
    server: bool


def runnable_blocks(text: str) -> list[Block]:
    """Return the README's code blocks marked runnable, in order."""
    lines = text.splitlines()
    blocks = []
    for index, line in enumerate(lines):
        marker = MARKER.match(line.strip())
        if marker is None:
            continue
        fence = FENCE.match(lines[index + 1]) if index + 1 < len(lines) else None
        assert fence is not None, f"README.md:{index + 1}: a runnable marker not before a fence"
        end = next(j for j in range(index + 2, len(lines)) if lines[j].startswith("```"))
        body = "\n".join(lines[index + 2 : end]) + "\n"
        blocks.append(Block(fence["lang"], body, index + 3, marker["kind"] == "server"))
    return blocks


def user_environment(home: Path) -> dict[str, str]:
    """Return a new user's environment: the venv's bin first on PATH, no ARENA_* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["HOME"] = str(home)
    env["COLUMNS"] = "120"
    return env


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One fresh directory for every block: what one block writes, the next may read."""
    return tmp_path_factory.mktemp("readme")


@pytest.fixture(scope="module")
def server_url(workdir: Path) -> Iterator[str]:
    """Start `arena serve` on a free port in the work directory; yield its URL."""
    env = user_environment(workdir)
    if os.geteuid() != 0:  # the README's grading and hosted bot examples then may run unsandboxed
        env["ARENA_GRADER_ALLOW_UNSANDBOXED"] = "true"
        env["ARENA_HOSTED_ALLOW_UNSANDBOXED"] = "true"
    process = subprocess.Popen(
        [str(BIN / "arena"), "serve", "--port", "0"],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    assert first.startswith("Arena on http://127.0.0.1:"), first
    url = first.split()[2]
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"{url}/health", timeout=1)
            break
        except httpx.HTTPError:
            assert process.poll() is None and time.monotonic() < deadline, "no server"
            time.sleep(0.1)
    try:
        yield url
    finally:
        process.terminate()
        process.communicate(timeout=20)


BLOCKS = runnable_blocks(README.read_text(encoding="utf-8"))


def test_readme_has_runnable_blocks() -> None:
    assert len(BLOCKS) >= 5
    assert any(block.server for block in BLOCKS)


OUTPUT_OPTIONS = re.compile(r"(?:--html|--json|--results|--journal|--out|>)\s+([\w./-]+)")


def test_no_two_readme_commands_write_the_same_file() -> None:
    # The blocks run in one directory, as in one terminal: a second report under the same name
    # would replace the first one a reader just made.
    written: dict[str, int] = {}
    for block in runnable_blocks(README.read_text()):
        for offset, line in enumerate(block.text.splitlines()):
            if line.lstrip().startswith("#"):
                continue
            for path in OUTPUT_OPTIONS.findall(line.split(" # ")[0]):
                here = block.line + offset
                assert path not in written, (
                    f"README.md:{here} writes {path}, as README.md:{written[path]} does"
                )
                written[path] = here
    assert "tournament.html" in written


@pytest.mark.timeout(900)
# The blocks build on each other in one working directory (a folder one makes, another grades):
# they run in order in one process (`make test` gives each xdist worker whole files).
@pytest.mark.parametrize("block", BLOCKS, ids=[f"line {b.line}" for b in BLOCKS])
def test_readme_block_runs(block: Block, workdir: Path, request: pytest.FixtureRequest) -> None:
    text = block.text
    if block.server:
        text = text.replace(README_URL, request.getfixturevalue("server_url"))
    if block.lang == "python":
        argv = [sys.executable, "-c", text]
    else:
        # One terminal session: what a block sets (a token, a match id) the next block sees.
        session = (
            "set -euo pipefail\nset -a\n"
            f"if [ -f {ENV_FILE} ]; then source {ENV_FILE}; fi\n"
            f"trap 'export -p > {ENV_FILE}' EXIT\nset -x\n"
        )
        argv = ["bash", "-c", session + text]
    done = subprocess.run(
        argv,
        cwd=workdir,
        env=user_environment(workdir),
        capture_output=True,
        text=True,
        timeout=850,
        check=False,
    )
    assert done.returncode == 0, (
        f"README.md line {block.line} failed (exit {done.returncode}):\n"
        f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    assert "Traceback" not in done.stdout + done.stderr
    # curl exits 0 on an HTTP error: the server's error body is how a refusal shows.
    assert '"type":"error"' not in done.stdout.replace(" ", ""), done.stdout[-3000:]
