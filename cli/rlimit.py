"""Raise a server process's soft open-file limit to its hard one (docs/SECURITY.md, "Sizing")."""

from __future__ import annotations

import resource

UNLIMITED_TARGET = 1 << 20
"""The soft limit asked for when the hard limit is unlimited (Linux's default `nr_open`)."""


def raise_open_file_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit; return the soft limit now in force.

    Every connection is an open file: at a soft limit of 1,024, a common default, a server
    refuses every new client once that many are open, whatever its own limits say. The hard
    limit is the operator's to set (ulimit -Hn, systemd's LimitNOFILE, Docker's --ulimit).
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = UNLIMITED_TARGET if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return soft  # not allowed here (a sandbox): keep what there is
        return target
    return soft
