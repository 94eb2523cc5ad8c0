"""The wearable a flow links and watches: pacerd (with the pacerctl beside it) on a config of
its own, recording the bundled 3 km park run (tools/demo-data) from real gpsd through gpsfake,
and speaking into WAV files (espeak-ng), since there is no sound card here. No strap, modem or
bus: the flows that need those start them themselves. Every process is its own group, stopped
by PID."""

import os
import re
import subprocess
import time

from pacertools.common import ROOT, read_text
from pacertools.control import Control
from pacertools.gpsfake import GPSFake
from pacertools.ports import free_port
from pacertools.processes import end_group, group_name

PARK_RUN = os.path.join(ROOT, "tools", "demo-data", "park-3k.nmea")
# "said (kind): text" is what pacerd journals for each thing it spoke (VoiceService).
SAID = re.compile(r"\bsaid \((?P<kind>[a-z_]+)(?:;[^)]*)?\): (?P<text>.*)$")


class Device:
    """pacerd with `upload` (a dict of [upload] keys, e.g. the cloud's URL) and `zones` (privacy
    zones, each (lat, lon, radius_m)) in its config; gpsfake plays the park run at `cycle`
    seconds a sentence once released."""

    def __init__(self, bin_dir, directory, upload=None, zones=(), cycle=0.004):
        self.bin_dir, self.dir, self.cycle = bin_dir, directory, cycle
        os.makedirs(directory, exist_ok=True)
        self.log_path = os.path.join(directory, "pacerd.log")
        self.socket = os.path.join(directory, "control.sock")
        self.gps_port = free_port()
        self.gpsfake = GPSFake(self.gps_port, os.path.join(directory, "gpsfake"))
        self.process = None
        self.control = Control(self.socket)
        lines = ["[gps]", 'host = "127.0.0.1"', f"port = {self.gps_port}",
                 "[storage]", f'path = "{os.path.join(directory, "pacer.db")}"',
                 "[control]", f'socket = "{self.socket}"', f'group = "{group_name()}"',
                 "[voice]", 'output = "wav"', f'wav_dir = "{os.path.join(directory, "speech")}"']
        if upload:
            lines.append("[upload]")
            lines += [f"{key} = {toml_value(value)}" for key, value in upload.items()]
        for lat, lon, radius in zones:
            lines += ["[[privacy_zone]]", f"lat = {lat}", f"lon = {lon}", f"radius_m = {radius}"]
        self.config = os.path.join(directory, "pacer.toml")
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n")

    def start(self, timeout=30.0):
        """Starts pacerd (the park run's gpsfake too, held until `record_park_run`) and waits
        until its control socket answers."""
        if not self.gpsfake.running():
            self.gpsfake.start(PARK_RUN, cycle=self.cycle)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([os.path.join(self.bin_dir, "pacerd"), "--config", self.config],
                                            stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL,
                                            start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"pacerd exited ({self.process.returncode}): {self.log_tail()}")
            try:
                self.control.status()
                return
            except Exception:  # noqa: BLE001 - not listening yet
                if time.monotonic() > deadline:
                    raise RuntimeError(f"pacerd's control socket did not answer within {timeout:.0f} s: {self.log_tail()}")
                time.sleep(0.05)

    def ctl(self, *arguments, check=True):
        """`pacerctl --socket ... ARGUMENTS`; its stdout (raises with its stderr when it fails
        and `check`)."""
        run = subprocess.run([os.path.join(self.bin_dir, "pacerctl"), "--socket", self.socket, *arguments],
                             capture_output=True, text=True, timeout=60)
        if check and run.returncode != 0:
            raise AssertionError(f"pacerctl {' '.join(arguments)} exited {run.returncode}: {run.stderr.strip()}")
        return run.stdout

    def record_park_run(self, timeout=120.0):
        """`pacerctl run start`, the whole park run played as fast as gpsd takes it, `run stop`."""
        self.ctl("run", "start")
        self.gpsfake.release()
        self.wait_run_end(timeout)
        self.ctl("run", "stop")

    def wait_run_end(self, timeout=120.0):
        """Waits until gpsfake has played the whole park run (gpsd goes away at its end)."""
        deadline = time.monotonic() + timeout
        while self.control.status().get("gps") != "gpsd_unreachable":
            if time.monotonic() > deadline:
                raise AssertionError(f"the park run did not end within {timeout:.0f} s: {self.control.status()}")
            time.sleep(0.2)

    def said(self):
        """[(kind, text)] of everything pacerd spoke so far, across restarts, oldest first."""
        return [(m["kind"], m["text"].strip()) for m in map(SAID.search, read_text(self.log_path).splitlines()) if m]

    def wait_said(self, text, timeout=20.0):
        """Waits until pacerd has spoken a line containing `text`; [(kind, text)] of those lines."""
        deadline = time.monotonic() + timeout
        while True:
            found = [entry for entry in self.said() if text in entry[1]]
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"pacerd did not say {text!r} within {timeout:.0f} s; it said {self.said()[-8:]}")
            time.sleep(0.1)

    def restart(self):
        self.stop_daemon()
        self.start()

    def stop_daemon(self):
        self.control.close()
        if self.process is not None:
            end_group(self.process)
            self.process = None

    def stop(self):
        self.stop_daemon()
        self.gpsfake.stop()

    def log_tail(self, lines=15):
        return "\n".join(read_text(self.log_path).splitlines()[-lines:])


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
