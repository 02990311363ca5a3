"""The seccomp filter every sandboxed command runs under (bwrap ``--seccomp FD``).

Namespaces leave some kernel state shared. The session keyring is the one that matters: a
process inherits its parent's, bwrap makes no new one, and in a container (runc gives each one
a session keyring) or under systemd every sandbox of a run would share it, so a with-skill arm
could ``add_key`` a token the baseline then reads. The filter refuses the key-management calls
outright (and skillab gives each command a fresh, empty session keyring besides, ``keyring``).

It refuses, with ``EPERM``, the calls a sandboxed command has no use for and that reach
kernel state or attack surface outside its namespaces:

* keys: ``add_key``, ``request_key``, ``keyctl``;
* namespaces and mounts (bwrap has made them before the filter is loaded): ``unshare``,
  ``setns``, ``mount``, ``umount2``, ``pivot_root`` and the new mount API;
* kernel code and tracing: ``bpf``, ``perf_event_open``, ``kexec_*``, module loading,
  ``userfaultfd``, ``io_uring_*`` (Docker's default profile drops it too; libuv falls back);
* host administration: ``reboot``, ``swapon``/``swapoff``, ``acct``, ``quotactl``, ``syslog``,
  ``open_by_handle_at``, ``lookup_dcookie``, ``vhangup``; on x86_64 ``iopl``, ``ioperm``, ``uselib``.

``ptrace`` stays: the command's own pid namespace holds only its own processes, and a task may
debug its program. Only the native ABI is let through: x32 calls on x86_64 and any other
architecture's (i386 by ``int 0x80``, arm32) are refused whole, since their numbers differ and
would slip past the list.
"""

from __future__ import annotations

import errno
import functools
import os
import struct

# linux/audit.h
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
# linux/filter.h, linux/seccomp.h
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_OFFSET_NR, _OFFSET_ARCH = 0, 4
_X32_SYSCALL_BIT = 0x40000000

# The syscalls numbered alike on x86_64 and aarch64 (the new mount API, io_uring, ...).
_COMMON = {
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442, "quotactl_fd": 443,
}
REFUSED: dict[int, dict[str, int]] = {
    AUDIT_ARCH_X86_64: {
        "add_key": 248, "request_key": 249, "keyctl": 250,
        "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
        "bpf": 321, "perf_event_open": 298, "kexec_load": 246, "kexec_file_load": 320,
        "init_module": 175, "finit_module": 313, "delete_module": 176, "userfaultfd": 323,
        "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163, "quotactl": 179,
        "syslog": 103, "open_by_handle_at": 304, "lookup_dcookie": 212, "vhangup": 153,
        "iopl": 172, "ioperm": 173, "uselib": 134, **_COMMON,
    },
    AUDIT_ARCH_AARCH64: {
        "add_key": 217, "request_key": 218, "keyctl": 219,
        "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41,
        "bpf": 280, "perf_event_open": 241, "kexec_load": 104, "kexec_file_load": 294,
        "init_module": 105, "finit_module": 273, "delete_module": 106, "userfaultfd": 282,
        "reboot": 142, "swapon": 224, "swapoff": 225, "acct": 89, "quotactl": 60,
        "syslog": 116, "open_by_handle_at": 265, "lookup_dcookie": 18, "vhangup": 58, **_COMMON,
    },
}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _arch_block(arch: int, numbers: dict[str, int]) -> list[bytes]:
    """Load the call number, refuse the listed ones (and x32 calls), allow the rest."""
    deny = _op(_RET_K, _RET_ERRNO | errno.EPERM)
    block = [_op(_LD_W_ABS, _OFFSET_NR)]
    if arch == AUDIT_ARCH_X86_64:
        block += [_op(_JGE_K, _X32_SYSCALL_BIT, 0, 1), deny]
    for number in sorted(set(numbers.values())):
        block += [_op(_JEQ_K, number, 0, 1), deny]
    return [*block, _op(_RET_K, _RET_ALLOW)]


@functools.cache
def program() -> bytes:
    """The filter as bwrap reads it: an array of ``struct sock_filter``."""
    ops = [_op(_LD_W_ABS, _OFFSET_ARCH)]
    for arch, numbers in REFUSED.items():
        block = _arch_block(arch, numbers)
        ops += [_op(_JEQ_K, arch, 0, len(block)), *block]
    ops.append(_op(_RET_K, _RET_ERRNO | errno.EPERM))  # a foreign ABI: nothing at all
    if len(ops) > 4096:  # BPF_MAXINSNS
        raise AssertionError("seccomp program too long")
    return b"".join(ops)


def supported() -> bool:
    """Whether the filter knows this machine's architecture (else bwrap gets none)."""
    return os.uname().machine in ("x86_64", "aarch64")


def filter_fd() -> int:
    """A pipe's read end holding the filter, for one bwrap to read to its end."""
    data = program()
    read, write = os.pipe()
    try:
        os.write(write, data)  # far below a pipe's buffer: never blocks
    finally:
        os.close(write)
    return read
