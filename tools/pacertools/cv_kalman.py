"""A plain constant-velocity Kalman filter on gpsd positions: the yardstick the no-Doppler rows of
tools/bench-accuracy are printed against (issue #24). It lives in the benchmark, not in the
product: Pacer's own filter has to beat it.

The filter: state (east, north, v_east, v_north) in a local tangent plane re-centred on the
estimate every epoch; white-noise acceleration of spectral density 0.3 (m/s^2)^2 s; position
sigma gpsd's eph / 4, at least 3 m (the tracker's reading of eph); chi-square gate 16 on the 2-D
innovation; after 5 gated fixes in a row it re-syncs on the fix, keeping its velocity.
Speed = |v|. Around it, the tracker's own bookkeeping: fixes with no fix mode, position or time
and repeated times are skipped, moving starts above 0.8 m/s and stops below 0.5 m/s, distance is
the trapezoid integral of the speed while moving, and a gap (> max(3 s, 2.2 periods)) adds the
speeds' estimate bounded by [chord, 1.6 chord] (the tracker's bridge).

`replay(path)` returns a document shaped like `pacerctl replay --json`'s (summary.distance_m,
summary.moving_time_s, samples[].time and .speed_mps), so bench-accuracy scores both alike.
"""

import json
import math

from .common import time_ms

A = 6378137.0
F = 1 / 298.257223563
E2 = F * (2 - F)

ACCELERATION_DENSITY = 0.3
MIN_SIGMA_M = 3.0
GATE = 16.0
RESYNC_AFTER = 5
RESUME_ABOVE = 0.8
PAUSE_BELOW = 0.5


def _radii(lat_deg):
    s = math.sin(math.radians(lat_deg))
    w = 1 - E2 * s * s
    return A * (1 - E2) / w ** 1.5, A / math.sqrt(w)


def _offset(origin, lat, lon):
    m, n = _radii(origin[0])
    return (math.radians(lon - origin[1]) * n * math.cos(math.radians(origin[0])),
            math.radians(lat - origin[0]) * m)


def _moved(origin, east, north):
    m, n = _radii(origin[0])
    return (origin[0] + math.degrees(north / m),
            origin[1] + math.degrees(east / (n * math.cos(math.radians(origin[0])))))


class _Axis:
    """One axis of the filter (isotropic noise decouples east and north)."""

    def __init__(self, variance):
        self.x, self.v = 0.0, 0.0
        self.p00, self.p01, self.p11 = variance, 0.0, 25.0

    def predict(self, dt, q):
        self.x += self.v * dt
        self.p00 += dt * (2 * self.p01 + dt * self.p11) + q * dt ** 3 / 3
        self.p01 += dt * self.p11 + q * dt * dt / 2
        self.p11 += q * dt

    def update(self, z, r):
        s = self.p00 + r
        k0, k1 = self.p00 / s, self.p01 / s
        y = z - self.x
        self.x += k0 * y
        self.v += k1 * y
        self.p00, self.p01, self.p11 = (1 - k0) * self.p00, (1 - k0) * self.p01, self.p11 - k1 * self.p01


def _fixes(path):
    last = None
    with open(path) as f:
        for line in f:
            if '"TPV"' not in line:
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError:
                continue
            if d.get("mode", 0) < 2 or "lat" not in d or "lon" not in d or "time" not in d:
                continue
            ms = time_ms(d["time"])
            if last is not None and ms <= last:
                continue
            last = ms
            yield d["time"], ms / 1000.0, d["lat"], d["lon"], d.get("eph", 12.0)


class Bookkeeping:
    """The tracker's bookkeeping around a speed estimate: moving starts above 0.8 m/s and stops
    below 0.5 m/s, distance is the trapezoid integral of the speed while moving, and a gap
    (> max(3 s, 2.2 periods)) adds the speeds' estimate bounded by [chord, 1.6 chord]."""

    def __init__(self):
        self.moving = False
        self.distance = self.moving_time = self.last_integrand = 0.0
        self.period = 1.0
        self.samples = []

    def add(self, text, speed, dt=None, chord=None):
        """One fix: `dt` since the previous one (None for the first), `chord()` the straight line
        from it in metres (asked for across a gap only)."""
        was_moving = self.moving
        if self.moving and speed < PAUSE_BELOW:
            self.moving = False
        elif not self.moving and speed > RESUME_ABOVE:
            self.moving = True
        integrand = speed if self.moving else 0.0
        if dt is not None:
            gap = dt > max(3.0, 2.2 * self.period)
            if not gap:
                self.period += 0.1 * (dt - self.period)
            if gap:
                if was_moving or self.moving:
                    bridged = (self.last_integrand + integrand) / 2 * dt
                    self.distance += min(max(bridged, chord()), 1.6 * chord())
                    self.moving_time += dt
            else:
                self.distance += (self.last_integrand + integrand) / 2 * dt
                if self.moving:
                    self.moving_time += dt
        self.last_integrand = integrand
        self.samples.append({"time": text, "speed_mps": integrand})

    def document(self):
        """Shaped like `pacerctl replay --json`'s."""
        return {"summary": {"distance_m": self.distance, "moving_time_s": self.moving_time},
                "samples": self.samples}


def replay(path):
    origin = None
    east = north = None
    gated = 0
    book = Bookkeeping()
    previous = None  # (t, lat, lon)
    for text, t, lat, lon, eph in _fixes(path):
        sigma = max(eph / 4, MIN_SIGMA_M)
        r = sigma * sigma
        if previous is None:
            origin = (lat, lon)
            east, north = _Axis(r), _Axis(r)
            previous = (t, lat, lon)
            book.add(text, 0.0)
            continue
        dt = t - previous[0]
        east.predict(dt, ACCELERATION_DENSITY)
        north.predict(dt, ACCELERATION_DENSITY)
        ze, zn = _offset(origin, lat, lon)
        ie, inn = ze - east.x, zn - north.x
        d2 = ie * ie / (east.p00 + r) + inn * inn / (north.p00 + r)
        if d2 > GATE:
            gated += 1
            if gated >= RESYNC_AFTER:
                ve, vn = east.v, north.v
                origin = (lat, lon)
                east, north = _Axis(r), _Axis(r)
                east.v, north.v = ve, vn
                gated = 0
        else:
            gated = 0
            east.update(ze, r)
            north.update(zn, r)
        origin = _moved(origin, east.x, north.x)
        east.x = north.x = 0.0
        speed = math.hypot(east.v, north.v)

        def chord():
            m, n = _radii(lat)
            return math.hypot(math.radians(lon - previous[2]) * n * math.cos(math.radians(lat)),
                              math.radians(lat - previous[1]) * m)

        book.add(text, speed, dt, chord)
        previous = (t, lat, lon)
    return book.document()
