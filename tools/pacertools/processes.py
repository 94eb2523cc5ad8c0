"""Child processes, each the leader of its own process group (start_new_session=True), stopped by
PID and group, never by name; their CPU time and memory from /proc."""

import grp
import os
import signal
import subprocess
import time

from .common import now, read_text

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_stat(pid):
    """(state, pgrp, cpu seconds) from /proc/PID/stat, None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[2]), (int(fields[11]) + int(fields[12])) / CLK_TCK


def cpu_seconds(pid):
    s = proc_stat(pid)
    return s[2] if s else None


def process_cpu_s(pid):
    """CPU seconds of process `pid` in ns resolution, exited threads included: its process CPU
    clock (clock_getcpuclockid's value, MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)). Falls back
    on /proc/PID/stat's ticks."""
    try:
        return time.clock_gettime_ns(((~pid) << 3) | 2) / 1e9
    except OSError:
        return cpu_seconds(pid)


# What memory_kb reads by default; a zombie has none of these (it has Threads), so an empty
# answer means the process is gone.
RSS_KEYS = ("VmRSS", "VmHWM")
RSS_DETAIL_KEYS = RSS_KEYS + ("RssAnon", "RssFile", "Threads")


def memory_kb(pid, keys=RSS_KEYS):
    """{key: kB (Threads: a count)} from /proc/PID/status ({} when gone)."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in keys:
                    out[key] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


def live_group_members(pgid):
    """PIDs in process group `pgid` that are not zombies (an orphaned gpsd may stay a zombie)."""
    members = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            s = proc_stat(int(name))
            if s and s[1] == pgid and s[0] != "Z":
                members.append(int(name))
    return members


def kill_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def end_group(proc, first=signal.SIGTERM, grace=3.0):
    """Signals the process group of `proc` (its leader: started with start_new_session), SIGKILL
    after `grace`; returns once no live member is left and the leader is reaped."""
    if proc is None:
        return
    pgid = proc.pid
    if proc.poll() is None or live_group_members(pgid):
        kill_group(pgid, first)
        deadline = now() + grace
        while live_group_members(pgid) and now() < deadline:
            time.sleep(0.01)
        if live_group_members(pgid):
            kill_group(pgid, signal.SIGKILL)
            deadline = now() + 5
            while live_group_members(pgid) and now() < deadline:
                time.sleep(0.01)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def group_name():
    """This process's group: the control socket's group in a test config (no "pacer" group here)."""
    return grp.getgrgid(os.getgid()).gr_name


def wait_listening(proc, out_path, err_path, what, timeout=10):
    """The port a server child announces as its first line on stdout ("listening on ... PORT",
    as tools/https-sink does); ends its group and raises when it does not within `timeout`."""
    deadline = now() + timeout
    while now() < deadline:
        text = read_text(out_path)
        if text.startswith("listening on ") and "\n" in text:
            return int(text.split("\n")[0].split()[-1])
        if proc.poll() is not None:
            break
        time.sleep(0.01)
    end_group(proc)
    raise RuntimeError(f"{what} did not start: {read_text(err_path)[-300:]}")
