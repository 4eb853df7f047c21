# SPDX-License-Identifier: Apache-2.0
"""Markers and synchronous checkpoints for qprof, from Python (standard library only).

Every call is a no-op outside ``qprof run``::

    from qprof_mark import mark, stage

    mark("Loaded")                      # a checkpoint, acknowledged (synchronous by default)
    with stage("Calibration"):          # "Calibration Start" ... "Calibration End": a stage
        calibrate()

    @stage("Training")                  # the same, around every call of a function
    def train(): ...

A synchronous checkpoint returns once qprof has taken its sample (or after 100 ms when qprof
does not answer), so that the figures are those of the moment the program reached it: memory
freed right after ``stage`` ends is not counted as freed inside it. When the program has
imported torch and CUDA is available, each checkpoint also sends what torch's caching
allocator holds per device (``torch.cuda.memory_allocated``/``memory_reserved``); this module
never imports torch itself. The protocol is in qprof's README, "Marker channel".
"""

import contextlib
import os
import select
import shutil
import stat
import sys
import tempfile
import time

__all__ = ["mark", "stage", "active", "SYNC_TIMEOUT"]

SYNC_TIMEOUT = 0.1  # seconds a synchronous checkpoint waits for qprof at most
_LINE_MAX = 4096  # PIPE_BUF: a write this long reaches the pipe in one piece
_BLANKS = " \t\r\n"  # what qprof trims off a label


def _channel():
    """A descriptor to write markers to and whether to close it after, or (None, False)."""
    fd_text = os.environ.get("QPROF_MARK_FD", "")
    if fd_text.isdigit():
        fd = int(fd_text)
        try:
            st = os.fstat(fd)
            # Only qprof's own pipe: a program may have closed the descriptor and reused its
            # number for a file or a pipe of its own, which must never receive a marker.
            if stat.S_ISFIFO(st.st_mode) and _is_qprof_pipe(st, os.environ.get("QPROF_MARK_FD_ID")):
                return fd, False
        except OSError:
            pass
    path = os.environ.get("QPROF_MARK_PATH", "")
    if path.startswith("/"):
        return _open_fifo(path), True
    return None, False


def _open_fifo(path):
    """QPROF_MARK_PATH opened for writing when it is a FIFO of this process's effective uid in a
    directory owned by it or root that no one else may change (or a sticky one, as /tmp), else
    None: the variable outlives qprof in a daemon, and whoever could plant a file, a link or a
    FIFO of their own at that path must never receive a marker."""
    directory, name = os.path.split(path)
    me = os.geteuid()
    try:
        dir_fd = os.open(directory or "/", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        dst = os.fstat(dir_fd)
        if dst.st_uid not in (me, 0):
            return None
        if dst.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not dst.st_mode & stat.S_ISVTX:
            return None
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISFIFO(st.st_mode) or st.st_uid != me:
            return None
        # Non-blocking: no qprof reading (ENXIO) or a full FIFO never blocks the program.
        fd = os.open(name, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY, dir_fd=dir_fd)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    opened = os.fstat(fd)
    if not stat.S_ISFIFO(opened.st_mode) or (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        return None
    return fd


def _is_qprof_pipe(st, fd_id):
    """Whether `st` is the pipe QPROF_MARK_FD_ID (``<st_dev>:<st_ino>``) names. An older qprof
    that exports no identity is taken at its word."""
    if fd_id is None:
        return True
    return fd_id == "%d:%d" % (st.st_dev, st.st_ino)


def active():
    """True when this process runs under qprof with a marker channel it can write to."""
    fd, close_after = _channel()
    if fd is not None and close_after:
        os.close(fd)
    return fd is not None


def _torch_lines():
    """torch's CUDA figures per device, when the program has imported torch (never imported here)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return ""
    try:
        cuda = torch.cuda
        if not cuda.is_available():
            return ""
        return "".join(
            "QPROF_TORCH %d %d %d\n" % (d, int(cuda.memory_allocated(d)), int(cuda.memory_reserved(d)))
            for d in range(int(cuda.device_count()))
        )
    except Exception:  # a half-initialised torch must never break the program's checkpoint
        return ""


def _clean(label):
    return str(label).replace("\n", " ").replace("\r", " ")


def _reply_dir():
    tmp = tempfile.gettempdir()
    if not tmp.startswith("/") or any(c in tmp for c in " \t\n"):
        tmp = "/tmp"  # the reply path is one word of the request line
    return tempfile.mkdtemp(prefix="qprof-ack.", dir=tmp)


def mark(label, sync=True):
    """Records a checkpoint named `label`. Returns True when qprof got it (sync: and sampled it
    within SYNC_TIMEOUT), False otherwise; outside qprof it does nothing and returns False. A
    label that is empty or only blanks is no marker: False at once, nothing written."""
    if not _clean(label).strip(_BLANKS):
        return False  # qprof drops it: a synchronous one would only wait SYNC_TIMEOUT in vain
    fd, close_after = _channel()
    if fd is None:
        return False
    try:
        if not sync:
            return _write(fd, _torch_lines() + "QPROF_MARK: " + _clean(label) + "\n")
        return _sync(fd, label)
    finally:
        if close_after:
            os.close(fd)


def _write(fd, text):
    data = text.encode("utf-8", "replace")
    try:
        return os.write(fd, data) == len(data)
    except OSError:  # qprof is gone (EPIPE: Python ignores SIGPIPE) or the FIFO is full
        return False


def _sync(fd, label):
    # The reply FIFO is this writer's own, so that many writers never take each other's answer.
    try:
        directory = _reply_dir()
    except OSError:
        _write(fd, _torch_lines() + "QPROF_MARK: " + _clean(label) + "\n")
        return False
    reply = os.path.join(directory, "ack")
    try:
        os.mkfifo(reply, 0o600)
        reply_fd = os.open(reply, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            if not _write(fd, _torch_lines() + "QPROF_SYNC " + reply + " " + _clean(label) + "\n"):
                return False
            poller = select.poll()
            poller.register(reply_fd, select.POLLIN)
            deadline = time.monotonic() + SYNC_TIMEOUT
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                if poller.poll(left * 1000.0):
                    return os.read(reply_fd, 8).startswith(b"ok")
        finally:
            os.close(reply_fd)
    except OSError:
        return False
    finally:
        shutil.rmtree(directory, ignore_errors=True)


class stage(contextlib.ContextDecorator):
    """``with stage("X"):`` or ``@stage("X")``: marks "X Start" on entry and "X End" on exit
    (also when an exception leaves the block), synchronous unless sync=False."""

    def __init__(self, name, sync=True):
        self.name = _clean(name)
        self.sync = sync

    def __enter__(self):
        mark(self.name + " Start", sync=self.sync)
        return self

    def __exit__(self, *exc):
        mark(self.name + " End", sync=self.sync)
        return False
