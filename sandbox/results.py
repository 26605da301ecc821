"""How a sandboxed run ended, in the grader's terms and in words written for the student."""

from __future__ import annotations

import base64
import enum
import json
import os
import resource
import signal
from dataclasses import dataclass, field

from sandbox.init import READY
from sandbox.limits import MIB, Limits


class Status(enum.StrEnum):
    """How a sandboxed run ended."""

    OK = "ok"
    EXIT_ERROR = "exit_error"
    TIMEOUT = "timeout"
    CPU_LIMIT = "cpu_limit"
    MEMORY_LIMIT = "memory_limit"
    FILE_SIZE_LIMIT = "file_size_limit"
    OUTPUT_LIMIT = "output_limit"
    KILLED = "killed"
    SANDBOX_ERROR = "sandbox_error"


@dataclass(frozen=True)
class IsolationReport:
    """Which isolation mechanisms were actually in force for a run."""

    separate_user: bool
    """The program ran under the `Isolation` uid, not the grader's (only when root)."""
    network: bool
    filesystem: bool
    """The program ran in a private root (its directory, its interpreter, nothing else)."""
    pid_namespace: bool
    user_namespace: bool = False
    """A user namespace of its own, in which it could create no other."""
    seccomp: bool = False
    """The seccomp filter of sandbox/seccomp.py was loaded."""
    no_new_privs: bool = False
    capabilities_dropped: bool = False
    """An empty capability set, bounding set included."""
    disk_limit: bool = False
    """The working directory was a tmpfs of bounded size."""


@dataclass(frozen=True)
class SandboxResult:
    """What happened in one run; `reason` is written for the student."""

    status: Status
    reason: str
    exit_code: int | None
    signal: int | None
    wall_seconds: float
    cpu_seconds: float
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    isolation: IsolationReport
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def is_ok(self) -> bool:
        """Return whether the program exited normally with code 0 within all limits."""
        return self.status is Status.OK


@dataclass(frozen=True)
class Output:
    """What a run wrote: its stdout and stderr up to their cap, and the init's report."""

    stdout: bytes
    stderr: bytes
    report: bytes
    stdout_truncated: bool
    stderr_truncated: bool


def interpret(
    output: Output,
    kill_cause: str | None,
    shim_status: int,
    shim_rusage: resource.struct_rusage | None,
    wall: float,
    limits: Limits,
    isolation: IsolationReport,
) -> SandboxResult:
    """Return the result of a run from what it wrote and how it ended; `reason` for the student."""
    stdout, stderr, report = output.stdout, output.stderr, output.report
    cpu = shim_rusage.ru_utime + shim_rusage.ru_stime if shim_rusage else 0.0
    exit_code: int | None = None
    signal_number: int | None = None
    files: dict[str, bytes] = {}
    final = _read_report(report)
    if final is not None:
        status_word, cpu, files = final
        if os.WIFSIGNALED(status_word):
            signal_number = os.WTERMSIG(status_word)
        else:
            exit_code = os.WEXITSTATUS(status_word)
    stderr_text = stderr.decode(errors="replace")

    def result(status: Status, reason: str) -> SandboxResult:
        return SandboxResult(
            status=status,
            reason=reason,
            exit_code=exit_code,
            signal=signal_number,
            wall_seconds=wall,
            cpu_seconds=cpu,
            stdout=stdout.decode(errors="replace"),
            stderr=stderr_text,
            stdout_truncated=output.stdout_truncated,
            stderr_truncated=output.stderr_truncated,
            isolation=isolation,
            files=files,
        )

    if kill_cause == "timeout":
        return result(
            Status.TIMEOUT,
            f"your program ran for more than {limits.wall_seconds:g} s of wall time "
            "and was stopped",
        )
    if kill_cause == "output":
        return result(
            Status.OUTPUT_LIMIT,
            f"your program printed more than {_size(limits.output_bytes)} "
            "and was stopped; the output was cut there",
        )
    if not report.startswith(READY):
        lines = stderr_text.strip().splitlines() or [f"wait status {shim_status}"]
        return result(
            Status.SANDBOX_ERROR,
            f"the grader could not start your program (not your fault): {lines[-1]}",
        )
    if final is None:
        return result(Status.KILLED, "your program was stopped before it finished")
    tail = stderr_text[-4000:]
    if signal_number is not None:
        name = _signal_name(signal_number)
        if signal_number == signal.SIGXCPU or (
            signal_number == signal.SIGKILL and cpu >= limits.cpu_seconds * 0.95
        ):
            # The kernel sends SIGXCPU when its count, sampled at each timer tick, reaches the
            # limit; on a busy machine the exact count wait4 gives is lower. Report the count
            # the verdict was made on.
            cpu = max(cpu, float(limits.cpu_seconds))
            return result(
                Status.CPU_LIMIT,
                f"your program used more than {limits.cpu_seconds} s of CPU time and was stopped",
            )
        if signal_number == signal.SIGXFSZ:
            return result(Status.FILE_SIZE_LIMIT, _file_size_reason(limits))
        if "MemoryError" in tail or "bad_alloc" in tail:
            return result(Status.MEMORY_LIMIT, _memory_reason(limits))
        return result(
            Status.KILLED,
            f"your program was killed by {name}; a common cause is running out of memory "
            f"(the limit is {_size(limits.memory_bytes)}) or a crash in native code",
        )
    if exit_code == 0:
        return result(Status.OK, "your program finished normally")
    if "MemoryError" in tail or "Cannot allocate memory" in tail or "bad_alloc" in tail:
        return result(Status.MEMORY_LIMIT, _memory_reason(limits))
    if "File too large" in tail:
        return result(Status.FILE_SIZE_LIMIT, _file_size_reason(limits))
    last = next((line for line in reversed(tail.splitlines()) if line.strip()), "")
    detail = f": {last.strip()}" if last else ""
    return result(Status.EXIT_ERROR, f"your program exited with code {exit_code}{detail}")


def _read_report(report: bytes) -> tuple[int, float, dict[str, bytes]] | None:
    """Return the init's (wait status, CPU seconds, collected files); None if it did not finish."""
    if not report.startswith(READY) or len(report) == len(READY):
        return None
    try:
        final = json.loads(report[len(READY) :])
        files = {str(name): base64.b64decode(data) for name, data in final["files"].items()}
        return int(final["status"]), float(final["cpu"]), files
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def sandbox_error(reason: str, isolation: IsolationReport) -> SandboxResult:
    """Return the result of a run the grader could not start, for `reason`."""
    return SandboxResult(
        status=Status.SANDBOX_ERROR,
        reason=f"the grader could not start your program (not your fault): {reason}",
        exit_code=None,
        signal=None,
        wall_seconds=0.0,
        cpu_seconds=0.0,
        stdout="",
        stderr="",
        stdout_truncated=False,
        stderr_truncated=False,
        isolation=isolation,
    )


def _memory_reason(limits: Limits) -> str:
    return f"your program used more than {_size(limits.memory_bytes)} of memory and was stopped"


def _file_size_reason(limits: Limits) -> str:
    return f"your program tried to write a file larger than {_size(limits.file_size_bytes)}"


def _size(count: int) -> str:
    if count % MIB == 0:
        return f"{count // MIB} MiB"
    if count % 1024 == 0:
        return f"{count // 1024} KiB"
    return f"{count} bytes"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
