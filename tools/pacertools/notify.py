"""The NOTIFY_SOCKET end, as systemd's: every assignment a service sends, with its receipt time."""

import socket
import threading

from .common import now


class Notify:
    """Binds a datagram socket at `path` and records (monotonic receipt time, line) on a thread."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.1)
        self.lines = []  # (time, line)
        self.cond = threading.Condition()
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopping:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                break
            t = now()
            with self.cond:
                for line in data.decode("utf-8", "replace").split("\n"):
                    if line:
                        self.lines.append((t, line))
                self.cond.notify_all()

    def count(self, line):
        with self.cond:
            return sum(1 for _, l in self.lines if l == line)

    def wait_for(self, line, timeout, alive, after_count=0):
        """Receipt time of the (after_count+1)th `line`, or None (timeout or `alive()` false)."""
        deadline = now() + timeout
        with self.cond:
            while True:
                seen = [t for t, l in self.lines if l == line]
                if len(seen) > after_count:
                    return seen[after_count]
                if now() >= deadline or not alive():
                    return None
                self.cond.wait(0.01)

    def close(self):
        self.stopping = True
        self.thread.join(timeout=2)
        self.sock.close()
