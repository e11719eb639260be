"""One run at a time per results file: an exclusive ``flock`` on ``<results>.lock``, held for the whole run.

The kernel releases a ``flock`` when its holder dies, however it dies, so a killed run never leaves a stale
lock; the lock file is removed on release (the holder checks, after locking, that the file it locked is
still the one at that path, so removing it is safe).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from typing import Iterator


def lock_path(results: Path) -> Path:
    return results.with_name(results.name + ".lock")


@contextlib.contextmanager
def results_lock(results: Path, what: str) -> Iterator[None]:
    """Hold the lock of ``results`` inside the block; ``ValueError`` naming the holder's pid if it is taken.

    ``what`` names the run in the message (``notebook '01_tiny' [smoke]``).
    """
    path = lock_path(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise ValueError(
                f"{what} is already running (pid {holder}) and writing {results}: "
                "wait for it to finish, or give this run another --output"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the previous holder removed the file after we opened it: lock the new one
    try:
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        yield
    finally:
        path.unlink(missing_ok=True)
        os.close(fd)


def is_locked(results: Path) -> bool:
    """Whether a run holds the lock of ``results`` now (without taking it)."""
    try:
        fd = os.open(lock_path(results), os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
