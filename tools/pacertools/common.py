"""Paths, the clock, logging and interruption, as every tool uses them."""

import datetime as dt
import importlib.machinery
import importlib.util
import os
import shutil
import signal
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")


class Interrupted(Exception):
    pass


def raise_interrupted(signum, _frame):
    """A signal handler: SIGINT/SIGTERM become Interrupted, so that cleanups run."""
    raise Interrupted(signum)


def catch_termination():
    """From now on SIGTERM and SIGHUP raise Interrupted (SIGINT already raises
    KeyboardInterrupt), so that cleanups run; returns what puts the handlers back."""
    old = {s: signal.signal(s, raise_interrupted) for s in (signal.SIGTERM, signal.SIGHUP)}

    def restore():
        for s, h in old.items():
            signal.signal(s, h)
    return restore


def run_cleanups(steps):
    """Runs cleanup steps last first; one that fails is logged and the others still run."""
    for step in reversed(steps):
        try:
            step()
        except Exception as e:  # noqa: BLE001 - keep cleaning up
            log(f"cleanup: {e}")


def make_workdir(parent, prefix):
    """A fresh work directory in `parent` (--workdir), by default in /var/tmp: a real disk, where
    /tmp may be a tmpfs."""
    base = parent or ("/var/tmp" if os.path.isdir("/var/tmp") else tempfile.gettempdir())
    os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix=prefix, dir=base)


def remove_workdir(workdir, keep):
    if keep:
        log(f"work directory kept: {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)


def log(msg):
    """One line on stderr, named after the running tool (tools/bench-hr: "bench-hr: ...")."""
    print(f"{os.path.basename(sys.argv[0])}: {msg}", file=sys.stderr, flush=True)


def now():
    return time.monotonic()


def time_ms(text):
    """ISO-8601 UTC ('...Z', with or without fraction) to integer milliseconds."""
    t = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    return round(t.timestamp() * 1000)


def read_text(path):
    """A file's text ("" when it cannot be read): a child's log, which may not exist yet."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def load_tool(filename):
    """Another tool (a script without .py, e.g. "bench-hr") as a module, loaded once per process
    so that its classes are the same for every tool that uses it."""
    name = filename.replace("-", "_")
    if name not in sys.modules:
        loader = importlib.machinery.SourceFileLoader(name, os.path.join(ROOT, "tools", filename))
        module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
        sys.modules[name] = module
        loader.exec_module(module)
    return sys.modules[name]
