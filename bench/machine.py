"""Machine and library facts printed with every benchmark figure."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
from typing import Any


def cpu_model() -> str:
    """Return the CPU model name from /proc/cpuinfo, or the best platform guess."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Hardware", "Processor") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def package_version(name: str) -> str | None:
    """Return the installed version of distribution `name`, or None."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine_info() -> dict[str, Any]:
    """Platform, CPU, Python and library versions, for the benchmark record."""
    return {
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "python_executable": sys.executable,
        "arena": package_version("gametree-arena") or "source tree (not installed)",
        "open_spiel": package_version("open_spiel"),
    }


def describe(info: dict[str, Any]) -> str:
    """Return the machine facts as a few indented lines of text."""
    return "\n".join(
        [
            f"  machine: {info['platform']}",
            f"  cpu: {info['cpu']} ({info['cpu_count']} logical CPUs)",
            f"  python: {info['python']} ({info['python_executable']})",
            f"  arena: {info['arena']}; open_spiel: {info['open_spiel'] or 'not installed'}",
        ]
    )
