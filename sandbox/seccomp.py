"""The seccomp filter of the sandbox: the system calls a student program may not make.

Built with libseccomp (through pyseccomp) and exported as BPF, which bubblewrap loads
(`bwrap --seccomp FD`) just before it starts the program, after setting no_new_privs. Every
other system call is allowed: the filter removes the kernel interfaces a graded program never
needs and that would let it leave or weaken its sandbox, or attack the kernel itself. A denied
call fails with EPERM (clone3 with ENOSYS, so that libc falls back to clone, whose flags the
filter can read). Calls of another architecture's ABI (i386 or x32 on x86_64) kill the
process: libseccomp's default for a foreign architecture.
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile
from typing import Final

DENIED: Final[dict[str, str]] = {
    # Namespaces: a new user namespace gives its creator every capability inside it (mounts,
    # a tmpfs outside the run's size limit, ...); joining one leaves the sandbox's.
    "unshare": "new namespaces",
    "setns": "joining another namespace",
    # Mounts and the root: the program's file system is fixed once it starts.
    "mount": "mounting",
    "umount2": "unmounting",
    "pivot_root": "changing the root",
    "chroot": "changing the root",
    "fsopen": "the new mount API",
    "fsconfig": "the new mount API",
    "fsmount": "the new mount API",
    "fspick": "the new mount API",
    "move_mount": "the new mount API",
    "open_tree": "the new mount API",
    "mount_setattr": "the new mount API",
    # Other processes' memory and file descriptors.
    "ptrace": "tracing processes",
    "process_vm_readv": "reading another process's memory",
    "process_vm_writev": "writing another process's memory",
    "pidfd_getfd": "taking another process's file descriptors",
    "kcmp": "comparing other processes' kernel state",
    # The kernel keyring is not namespaced: keys would outlive the run and cross sandboxes.
    "keyctl": "the kernel keyring",
    "add_key": "the kernel keyring",
    "request_key": "the kernel keyring",
    # Large kernel attack surfaces a graded program never needs.
    "bpf": "eBPF programs",
    "perf_event_open": "performance counters (a side channel)",
    "userfaultfd": "user page-fault handling (stretches kernel races)",
    "io_uring_setup": "io_uring",
    "io_uring_enter": "io_uring",
    "io_uring_register": "io_uring",
    # File handles open files by inode, past every directory's permissions.
    "open_by_handle_at": "opening files by handle",
    "name_to_handle_at": "file handles",
    # The machine itself (each needs a capability the program lacks; denied all the same, so a
    # flaw in a capability check cannot matter).
    "kexec_load": "loading a kernel",
    "kexec_file_load": "loading a kernel",
    "init_module": "loading kernel modules",
    "finit_module": "loading kernel modules",
    "delete_module": "unloading kernel modules",
    "reboot": "rebooting",
    "swapon": "swap",
    "swapoff": "swap",
    "acct": "process accounting",
    "quotactl": "disk quotas",
    "quotactl_fd": "disk quotas",
    "syslog": "the kernel log",
    "vhangup": "hanging up the terminal",
    "settimeofday": "setting the clock",
    "clock_settime": "setting the clock",
    "clock_adjtime": "adjusting the clock",
    "sethostname": "the host name",
    "setdomainname": "the domain name",
    "iopl": "I/O ports",
    "ioperm": "I/O ports",
    "lookup_dcookie": "profiling internals",
    "fanotify_init": "watching the whole file system",
    # Obsolete interfaces, kept by the kernel for old binaries only.
    "uselib": "obsolete",
    "_sysctl": "obsolete",
    "sysfs": "obsolete",
    "ustat": "obsolete",
    "nfsservctl": "obsolete",
}
"""Each denied system call (EPERM) and why; unknown names on this architecture are skipped."""

CLONE_NAMESPACE_FLAGS: Final = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
"""clone(2) with any of these flags is denied (EPERM): a new namespace, as with unshare."""

_CLONE_FLAGS_ARGUMENT = 0
"""clone's flags are its first argument on x86_64 and aarch64 (its second on s390)."""


class SeccompUnavailableError(Exception):
    """libseccomp (libseccomp.so.2) or pyseccomp is missing: no filter can be built."""


@functools.cache
def filter_bpf() -> bytes:
    """Return the filter as BPF for `bwrap --seccomp`, built once per process.

    Raises SeccompUnavailableError when libseccomp cannot be loaded.
    """
    try:
        import pyseccomp  # noqa: PLC0415 - loads libseccomp; only the sandbox needs it
    except (ImportError, RuntimeError, OSError) as error:
        raise SeccompUnavailableError(f"libseccomp cannot be loaded: {error}") from error
    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    native = pyseccomp.Arch.NATIVE
    for name in DENIED:
        if pyseccomp.resolve_syscall(native, name) < 0:
            continue  # not a system call of this architecture
        rules.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
    for flag in CLONE_NAMESPACE_FLAGS.values():
        masked = pyseccomp.Arg(_CLONE_FLAGS_ARGUMENT, pyseccomp.MASKED_EQ, flag, flag)
        rules.add_rule(pyseccomp.ERRNO(errno.EPERM), "clone", masked)
    # clone3 passes its flags in memory, out of the filter's reach: libc then uses clone.
    if pyseccomp.resolve_syscall(native, "clone3") >= 0:
        rules.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as exported:
        rules.export_bpf(exported)
        exported.seek(0)
        bpf = exported.read()
    if not bpf or len(bpf) % 8:
        raise SeccompUnavailableError(f"libseccomp exported {len(bpf)} bytes of BPF")
    return bpf


def filter_fd() -> int:
    """Return a new file descriptor holding the filter's BPF at offset 0 (the caller closes it)."""
    fd = os.memfd_create("arena-seccomp", os.MFD_CLOEXEC)
    os.write(fd, filter_bpf())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
