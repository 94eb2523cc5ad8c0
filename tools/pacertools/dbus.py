"""A private dbus-daemon configured like the system bus, and busctl calls on it."""

import json
import os
import subprocess
import time

from .common import now, read_text
from .processes import end_group


class Bus:
    """A private dbus-daemon configured like the system bus (type system, EXTERNAL auth) with an
    allow-everything policy, on a unix socket in `directory`."""

    def __init__(self, directory):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.socket = os.path.join(directory, "system_bus_socket")
        self.address = "unix:path=" + self.socket
        self.config = os.path.join(directory, "bus.conf")
        with open(self.config, "w") as f:
            f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>{self.address}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
""")
        self.proc = None

    def start(self, timeout=10):
        out = os.path.join(self.dir, "address")
        with open(out, "wb") as o, open(os.path.join(self.dir, "dbus-daemon.err"), "wb") as e:
            self.proc = subprocess.Popen(["dbus-daemon", "--nofork", "--print-address=1",
                                          "--config-file=" + self.config],
                                         stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                         start_new_session=True)
        deadline = now() + timeout
        # --print-address=1: written once it listens.
        while "\n" not in read_text(out):
            if self.proc.poll() is not None:
                raise RuntimeError(f"dbus-daemon exited ({self.proc.returncode}): "
                                   f"{read_text(os.path.join(self.dir, 'dbus-daemon.err')).strip()[-300:]}")
            if now() > deadline:
                raise RuntimeError("dbus-daemon did not listen within 10 s")
            time.sleep(0.005)

    def stop(self):
        end_group(self.proc)


class BusctlError(Exception):
    pass


def busctl_call(address, dest, path, interface, method, signature="", args=(), timeout=15):
    """busctl --json=short call; the parsed reply ({"type", "data"}) or None when empty."""
    cmd = ["busctl", f"--address={address}", "--json=short", f"--timeout={timeout}", "--", "call",
           dest, path, interface, method]
    if signature:
        cmd += [signature] + [str(a) for a in args]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout + 5)
    if p.returncode != 0:
        raise BusctlError(f"{method} {list(args)}: {p.stderr.strip()}")
    out = p.stdout.strip()
    return json.loads(out) if out else None
