"""Reading a file that may not be what its name says: bounded in size, in time, and never blocking.

A path can name a FIFO, a socket or a device, or be a link to one; and some files that `stat`
calls regular are not files at all: `/proc/kmsg` (a symbolic link to it in a workspace) blocks a
read until the kernel logs something, and every file of /proc and /sys says its size is 0 whatever
it holds. `Path.read_bytes()` on any of these hangs the CLI and the server (issue 31); on a
regular file larger than a limit, it reads it whole first (a 1 GB file: 1 GB of memory).

`read_bytes(path, limit)` is the one way Tritonify reads a file it did not write:
* opened with O_NONBLOCK (opening a FIFO does not wait for a writer, and a read that would wait
  fails at once instead), then refused unless `fstat` says it is a regular file outside /proc
  and /sys;
* its size is checked before anything is read (`TooLarge`), and no more than `limit` + 1 bytes
  are ever read (a file that grows while it is read is caught too);
* reading stops after `timeout_s` (a file on a hung network mount).
Every refusal is a `NotReadable` (an OSError) whose message says why in words for the user.

Imports nothing of Tritonify (infra).
"""
from __future__ import annotations

import errno
import os
import stat
import time

READ_TIMEOUT_S = 10.0
CHUNK = 1 << 20
PSEUDO_ROOTS = ("/proc", "/sys")   # file systems whose "regular" files are views of the kernel


class NotReadable(OSError):
    """The file was not read: not a regular file, a pseudo-file, too large, or too slow."""

    def __init__(self, reason: str, path: str | os.PathLike | None = None):
        super().__init__(errno.EINVAL, reason)
        self.reason = reason
        self.filename = str(path) if path is not None else None

    def __str__(self) -> str:
        return self.reason


class TooLarge(NotReadable):
    """Over the limit; `size` is the file's size (None when only "more than `limit`" is known)."""

    def __init__(self, size: int | None, limit: int, path=None):
        said = f"{size / 1e6:.1f} MB, over" if size is not None else "more than"
        super().__init__(f"{said} the limit of {limit / 1e6:.0f} MB", path)
        self.size = size
        self.limit = limit


def special_kind(mode: int) -> str | None:
    """"a FIFO", "a socket", "a device", "a folder" or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def pseudo_file(path: str | os.PathLike) -> str | None:
    """Why `path` (links followed) is a kernel pseudo-file, or None."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    for root in PSEUDO_ROOTS:
        if real == root or real.startswith(root + "/"):
            return f"a file of {root} ({real}): its size says nothing and reading it may block"
    return None


def read_bytes(path: str | os.PathLike, limit: int, timeout_s: float = READ_TIMEOUT_S) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them (else `TooLarge`), read in at
    most `timeout_s`; a `NotReadable` for anything else, an OSError when it cannot be opened."""
    why = pseudo_file(path)
    if why:
        raise NotReadable(why, path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        kind = special_kind(st.st_mode)
        if kind:
            raise NotReadable(f"{kind}, not a regular file", path)
        if st.st_size > limit:
            raise TooLarge(st.st_size, limit, path)
        deadline = time.monotonic() + timeout_s
        parts: list[bytes] = []
        got = 0
        while True:
            try:
                chunk = os.read(fd, min(CHUNK, limit + 1 - got))
            except BlockingIOError:
                raise NotReadable("reading it would block (not a regular file on disk)", path) from None
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
            if got > limit:
                raise TooLarge(None, limit, path)   # it grew (or said 0): more than the limit
            if time.monotonic() > deadline:
                raise NotReadable(f"reading it took longer than {timeout_s:g} s", path)
        return b"".join(parts)
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike, limit: int, encoding: str = "utf-8", errors: str = "strict",
              timeout_s: float = READ_TIMEOUT_S) -> str:
    return read_bytes(path, limit, timeout_s).decode(encoding, errors)


def read_stream(stream, limit: int) -> bytes:
    """At most `limit` bytes of a binary stream (stdin), else `TooLarge` without reading the rest."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(None, limit)
    return data
