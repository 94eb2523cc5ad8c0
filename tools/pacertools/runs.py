"""Runs for the cloud's web pages, as a device uploads them (PUT /v1/runs/{id}/chunks/{seq} and
PUT /v1/runs/{id}): the bundled demo run (tools/demo-data/park-3k) or any tools/route-gen output,
its positions as the receiver sent them ($GPRMC of the .nmea) with the truth's distance and
moving flag, and a heart rate made up from the time (the demo's strap is simulated too)."""

import datetime as dt
import gzip
import json
import math
import os
import urllib.request
import uuid

from .common import ROOT

DEMO_PREFIX = os.path.join(ROOT, "tools", "demo-data", "park-3k")
CHUNK_SAMPLES = 2000


def _degrees(value, hemisphere):
    """NMEA ddmm.mmmm / dddmm.mmmm to signed degrees."""
    point = value.index(".")
    degrees = float(value[:point - 2]) + float(value[point - 2:]) / 60
    return -degrees if hemisphere in ("S", "W") else degrees


def load(prefix=DEMO_PREFIX, start=None):
    """[(time_ms, lat, lon, speed, distance, moving, hr)] of PREFIX.truth.json and PREFIX.nmea,
    shifted to begin at `start` (a datetime) when given; epochs without a fix are left out."""
    with open(prefix + ".truth.json") as f:
        truth = json.load(f)["samples"]
    fixes = []
    with open(prefix + ".nmea") as f:
        for line in f:
            if line.startswith("$GPRMC"):
                fields = line.split("*")[0].split(",")
                fixes.append((_degrees(fields[3], fields[4]), _degrees(fields[5], fields[6])) if fields[2] == "A" else None)
    if len(fixes) != len(truth):
        raise ValueError(f"{prefix}: {len(fixes)} $GPRMC epochs, {len(truth)} truth samples")
    first = dt.datetime.fromisoformat(truth[0]["time"].replace("Z", "+00:00"))
    shift = 0 if start is None else int((start - first).total_seconds() * 1000)
    samples = []
    for sample, fix in zip(truth, fixes):
        if fix is None or not sample["fix"]:
            continue
        t = sample["t"]
        time_ms = int(dt.datetime.fromisoformat(sample["time"].replace("Z", "+00:00")).timestamp() * 1000) + shift
        # A warm-up to about 150 bpm with a slow swing: what a chest strap might read.
        hr = round(95 + 55 * (1 - math.exp(-t / 150)) + 6 * math.sin(t / 90))
        samples.append((time_ms, fix[0], fix[1], sample["speed"], sample["s"], sample["moving"], hr))
    return samples


def chunks(samples, per_chunk=CHUNK_SAMPLES):
    """The samples as gzip'd chunk bodies (the wire's line format)."""
    bodies = []
    for index in range(0, len(samples), per_chunk):
        lines = "".join(f"{t},{lat:.7f},{lon:.7f},{speed:.2f},{distance:.1f},{1 if moving else 0},{hr}\n"
                        for t, lat, lon, speed, distance, moving, hr in samples[index:index + per_chunk])
        bodies.append(gzip.compress(lines.encode(), mtime=0))
    return bodies


def _iso(ms):
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def summary(samples, chunk_count):
    first, last = samples[0], samples[-1]
    moving = sum((b[0] - a[0]) / 1000 for a, b in zip(samples, samples[1:]) if b[5])
    distance = last[4] - first[4]
    hrs = [s[6] for s in samples]
    return {"start_time": _iso(first[0]), "end_time": _iso(last[0]), "distance_m": round(distance, 1),
            "moving_time_s": round(moving, 1), "elapsed_time_s": (last[0] - first[0]) / 1000,
            "avg_pace_s_per_km": round(moving / distance * 1000, 1) if distance > 0 else None,
            "max_speed_mps": max(s[3] for s in samples), "hr_avg": round(sum(hrs) / len(hrs), 1), "hr_max": max(hrs),
            "chunks": chunk_count, "state": "finished"}


def upload(base_url, token, samples, run_id=None):
    """Uploads the run as the device would; its id."""
    run_id = run_id or str(uuid.uuid4())
    bodies = chunks(samples)
    for seq, body in enumerate(bodies):
        _put(f"{base_url}/v1/runs/{run_id}/chunks/{seq}", token, body,
             {"Content-Type": "application/x-pacer-track", "Content-Encoding": "gzip"})
    _put(f"{base_url}/v1/runs/{run_id}", token, json.dumps(summary(samples, len(bodies))).encode(),
         {"Content-Type": "application/json"})
    return run_id


def _put(url, token, body, headers):
    request = urllib.request.Request(url, data=body, method="PUT", headers={**headers, "Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        if answer.status not in (200, 201):
            raise RuntimeError(f"PUT {url}: {answer.status}")
