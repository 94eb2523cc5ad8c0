"""gpsfake (and the gpsd it starts) replaying a log on a loopback port."""

import ctypes
import os
import signal
import subprocess
import threading
import time

from .common import now, read_text
from .ports import accepting
from .processes import end_group

_libc = ctypes.CDLL(None, use_errno=True)


def remove_gpsd_shm(port):
    """gpsfake sets GPSD_SHM_KEY to 0x4770<port as 4 hex digits>; gpsd 3.22 never removes it."""
    key = 0x47700000 | (port & 0xFFFF)
    try:
        with open("/proc/sysvipc/shm") as f:
            next(f)
            for line in f:
                cols = line.split()
                if int(cols[0]) == key and int(cols[6]) == 0:
                    _libc.shmctl(int(cols[1]), 0, None)  # IPC_RMID
    except (OSError, StopIteration, ValueError, IndexError):
        pass


class GPSFake:
    """gpsfake (and its gpsd) on a port of 127.0.0.1, held with -i until release()."""

    def __init__(self, port, directory):
        self.port = port
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.proc = None
        self.gate = None  # our write end of gpsfake's stdin
        self.runs = 0

    def spawn(self, log_path, cycle):
        """Starts gpsfake on `log_path` (-c `cycle` s per sentence) without waiting for gpsd."""
        self.runs += 1
        read_end, self.gate = os.pipe()
        os.set_inheritable(self.gate, False)
        cmd = ["gpsfake", "-1", "-q", "-p", "-c", f"{cycle:g}", "-P", str(self.port), "-i", log_path]
        env = dict(os.environ, TMPDIR=self.dir)  # gpsfake's control socket goes there
        try:
            with open(self.stderr_path(), "wb") as err:
                # Its own process group: gpsd, its child, stays in it and goes with it.
                self.proc = subprocess.Popen(cmd, stdin=read_end, stdout=subprocess.DEVNULL,
                                             stderr=err, env=env, start_new_session=True)
        finally:
            os.close(read_end)

    def start(self, log_path, cycle, timeout=20):
        """spawn(), then wait until gpsd accepts; the monotonic time it was first seen to."""
        self.spawn(log_path, cycle)
        return self.wait_accepting(timeout)

    def stderr_path(self):
        return os.path.join(self.dir, f"gpsfake-{self.runs}.err")

    def stderr(self):
        return read_text(self.stderr_path())

    def wait_accepting(self, timeout=20):
        """Monotonic time gpsd was first seen accepting (connect() every 2 ms)."""
        deadline = now() + timeout
        while not accepting(self.port):
            if self.proc.poll() is not None:
                raise RuntimeError(f"gpsfake exited ({self.proc.returncode}) before gpsd "
                                   f"listened: {self.stderr().strip()[-300:]}")
            if now() >= deadline:
                raise RuntimeError(f"gpsd not accepting on port {self.port} within {timeout:g} s")
            time.sleep(0.002)
        return now()

    def release(self):
        """A thread feeds gpsfake a newline per sentence until it is gone; it writes through its
        own duplicate, so stop() closing ours never makes it write to a reused descriptor."""
        fd = os.dup(self.gate)

        def feed():
            block = b"\n" * 4096
            try:
                while True:
                    os.write(fd, block)
            except OSError:
                pass
            finally:
                os.close(fd)

        threading.Thread(target=feed, daemon=True).start()

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM):
        """Signals the whole group at once (gpsd dies with gpsfake); returns when none is left."""
        if self.proc is None:
            return
        if self.gate is not None:
            os.close(self.gate)
            self.gate = None
        end_group(self.proc, first=sig)
        remove_gpsd_shm(self.port)
