"""The release binaries a benchmark runs, built when missing or older than the sources, and the
unit's settings it mimics."""

import os
import re
import subprocess
import sys

from .common import DEFAULT_DATA, ROOT, log


def newest_source_mtime():
    newest = os.path.getmtime(os.path.join(ROOT, "Package.swift"))
    for dirpath, _dirs, files in os.walk(os.path.join(ROOT, "Sources")):
        for f in files:
            newest = max(newest, os.path.getmtime(os.path.join(dirpath, f)))
    return newest


def add_binary_arguments(parser, scratch_path):
    """--data-dir, --pacerd, --pacerctl, --scratch-path, --no-build and --workdir, as
    ensure_binaries and the benchmarks read them."""
    parser.add_argument("--data-dir", default=DEFAULT_DATA,
                        help="the shared data folder with sim/ (default ../shared/data)")
    parser.add_argument("--pacerd", help="pacerd binary (default SCRATCH/release/pacerd, built if missing "
                        "or older than the sources)")
    parser.add_argument("--pacerctl", help="pacerctl binary (default next to pacerd)")
    parser.add_argument("--scratch-path", default=scratch_path,
                        help=f"SwiftPM build directory to use and build in (default {scratch_path})")
    parser.add_argument("--no-build", action="store_true", help="never run swift build")
    parser.add_argument("--workdir", help="where to make the temporary directory (default /var/tmp)")


def ensure_binaries(args, static=False):
    """(pacerd, pacerctl) paths from --pacerd/--pacerctl, else in --scratch-path, built in release
    mode when missing or stale (not with --no-build); None when there are none. `static`: with
    the Swift runtime and Foundation linked in, as pacerd is meant to ship."""
    given = {"pacerd": args.pacerd, "pacerctl": args.pacerctl}
    if given["pacerd"] or given["pacerctl"]:
        # One given: the other is expected next to it.
        for name, other in (("pacerd", "pacerctl"), ("pacerctl", "pacerd")):
            if not given[name]:
                given[name] = os.path.join(os.path.dirname(os.path.abspath(given[other])), name)
        for name, path in given.items():
            if not os.access(path, os.X_OK):
                log(f"{name} {path} is not an executable (give --pacerd and --pacerctl)")
                return None
        return os.path.abspath(given["pacerd"]), os.path.abspath(given["pacerctl"])
    scratch = os.path.join(ROOT, args.scratch_path)
    paths = {name: os.path.join(scratch, "release", name) for name in ("pacerd", "pacerctl")}
    need = [n for n, p in paths.items() if not os.access(p, os.X_OK)]
    if not args.no_build:
        newest = newest_source_mtime()
        stale = [n for n, p in paths.items() if n not in need and newest > os.path.getmtime(p)]
        if stale:
            log(f"sources are newer than {', '.join(stale)} in {os.path.relpath(scratch, ROOT)}; rebuilding")
            need += stale
    if need:
        if args.no_build:
            log(f"{', '.join(paths[n] for n in need)} missing and --no-build given")
            return None
        for name in need:
            cmd = ["swift", "build", "-c", "release", "--product", name, "--scratch-path", scratch]
            if static:
                # Only the pages it uses are loaded: about 5 MB less RSS than the shared libraries.
                cmd.insert(4, "--static-swift-stdlib")
            log(" ".join(cmd))
            rc = subprocess.call(cmd, cwd=ROOT, stdout=sys.stderr)
            if rc != 0 or not os.access(paths[name], os.X_OK):
                log(f"could not build {name}")
                return None
    return paths["pacerd"], paths["pacerctl"]


def unit_watchdog_usec():
    """WatchdogSec of systemd/pacerd.service in microseconds (None when absent)."""
    try:
        with open(os.path.join(ROOT, "systemd", "pacerd.service")) as f:
            for line in f:
                m = re.match(r"\s*WatchdogSec\s*=\s*(\d+(?:\.\d+)?)\s*(ms|s|min)?\s*$", line)
                if m:
                    scale = {"ms": 1e3, "s": 1e6, "min": 60e6, None: 1e6}[m.group(2)]
                    return int(float(m.group(1)) * scale)
    except OSError:
        pass
    return None
