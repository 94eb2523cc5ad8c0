"""The benchmarks' plain-text table and its cells, and the machine it ran on."""

import os
import platform
import re
import subprocess


def print_table(header, rows, right):
    """Columns padded to their widest cell; `right[i]`: column i aligned right."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]

    def line(cells):
        return "  ".join(c.rjust(widths[i]) if right[i] else c.ljust(widths[i])
                         for i, c in enumerate(cells)).rstrip()

    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def print_notes(notes, failed=None):
    """The lines under the table; `failed`: why the run did not complete."""
    print("Notes:")
    for n in notes:
        print("  " + n)
    if failed:
        print(f"  NOT COMPLETED: {failed}")


def verdict(ok):
    return "PASS" if ok else "FAIL"


def mb(kb):
    return "?" if kb is None else f"{kb * 1024 / 1e6:.1f} MB"


def ms(s):
    return "-" if s is None else f"{s * 1000:.0f} ms"


def command_output(cmd):
    """The first line a command prints (a version), "?" when it cannot be run."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=10)
        return p.stdout.strip().splitlines()[0] if p.stdout.strip() else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def machine():
    model = None
    try:
        with open("/sys/firmware/devicetree/base/model") as f:
            model = f.read().strip("\0\n ")
    except OSError:
        pass
    if not model:
        try:
            with open("/proc/cpuinfo") as f:
                m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
                model = m.group(1) if m else platform.machine()
        except OSError:
            model = platform.machine()
    return f"{model}, {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), " \
           f"Linux {platform.release()} {platform.machine()}"


def file_system_type(path):
    try:
        return subprocess.run(["stat", "-f", "-c", "%T", path], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
