"""A Rauch-Tung-Striebel smoother over a finished run's gpsd positions: the candidate for
recomputing the stored distance of a run without Doppler speed (issue #24, "the finished run").
It lives in the benchmark because it lost: on the tuning routes it is further from the truth than
Pacer's live along-track distance (README, "Receivers without Doppler speed"), so the stored
distance stays the live one.

The model: the constant-velocity filter of cv_kalman (white-noise acceleration of spectral
density Q, isotropic position sigma SIGMA_M, chi-square gate 16 with re-sync after 5 gated fixes,
Huber-style down-weighting above 4 like Pacer's PositionFilter) run forward over the whole run in
one plane, where each fix is placed by its WGS84 offset from the previous one (so every
fix-to-fix step is exact however long the run), then the RTS backward pass. Distance: the
trapezoid integral of the smoothed |v| while moving (hysteresis 0.8 / 0.5 m/s, as the tracker),
with the tracker's gap bridge.

`replay(path)` returns a document shaped like `pacerctl replay --json`'s (summary.distance_m,
samples[].time and .speed_mps), so bench-accuracy scores it like the others.
"""

import math

from .cv_kalman import GATE, RESYNC_AFTER, Bookkeeping, _fixes, _radii

Q = 0.3
SIGMA_M = 0.5
SOFT_GATE = 4.0


def _step(a, b):
    """East/north metres from fix a to fix b (mid-latitude radii, as WGS84.localOffset)."""
    mid = (a[0] + b[0]) / 2
    m, n = _radii(mid)
    return (math.radians(b[1] - a[1]) * n * math.cos(math.radians(mid)),
            math.radians(b[0] - a[0]) * m)


def _forward(times, xs, ys):
    """Filtered and predicted states and covariances (shared by both axes: isotropic noise)."""
    r0 = SIGMA_M * SIGMA_M
    state = [xs[0], 0.0, ys[0], 0.0]
    cov = (r0, 0.0, 25.0)
    filtered, filtered_cov = [state[:]], [cov]
    predicted, predicted_cov = [None], [None]
    gated = 0
    for k in range(1, len(times)):
        dt = times[k] - times[k - 1]
        e, ve, n, vn = state
        p00, p01, p11 = cov
        e += ve * dt
        n += vn * dt
        p00 += dt * (2 * p01 + dt * p11) + Q * dt ** 3 / 3
        p01 += dt * p11 + Q * dt * dt / 2
        p11 += Q * dt
        predicted.append([e, ve, n, vn])
        predicted_cov.append((p00, p01, p11))
        ie, inn = xs[k] - e, ys[k] - n
        d2 = (ie * ie + inn * inn) / (p00 + r0)
        r = r0
        if d2 > GATE:
            gated += 1
            if gated < RESYNC_AFTER:
                state, cov = [e, ve, n, vn], (p00, p01, p11)
                filtered.append(state[:])
                filtered_cov.append(cov)
                continue
            # Re-sync on the fix, keeping the velocity.
            gated = 0
            r = 1e-6
        else:
            gated = 0
            if d2 > SOFT_GATE:
                r = r0 * d2 / SOFT_GATE
        s = p00 + r
        k0, k1 = p00 / s, p01 / s
        state = [e + k0 * ie, ve + k1 * ie, n + k0 * inn, vn + k1 * inn]
        cov = ((1 - k0) * p00, (1 - k0) * p01, p11 - k1 * p01)
        filtered.append(state[:])
        filtered_cov.append(cov)
    return filtered, filtered_cov, predicted, predicted_cov


def smooth(times, xs, ys):
    """Smoothed states [east, v_east, north, v_north], one per fix."""
    filtered, filtered_cov, predicted, predicted_cov = _forward(times, xs, ys)
    count = len(times)
    out = [None] * count
    out[-1] = filtered[-1][:]
    for k in range(count - 2, -1, -1):
        dt = times[k + 1] - times[k]
        a00, a01, a11 = filtered_cov[k]
        # Gain C = P_f F^T P_p^-1, F = [[1, dt], [0, 1]].
        m00, m01, m10, m11 = a00 + a01 * dt, a01, a01 + a11 * dt, a11
        b00, b01, b11 = predicted_cov[k + 1]
        det = b00 * b11 - b01 * b01
        i00, i01, i11 = b11 / det, -b01 / det, b00 / det
        c00, c01 = m00 * i00 + m01 * i01, m00 * i01 + m01 * i11
        c10, c11 = m10 * i00 + m11 * i01, m10 * i01 + m11 * i11
        s, p, f = out[k + 1], predicted[k + 1], filtered[k]
        de, dve, dn, dvn = s[0] - p[0], s[1] - p[1], s[2] - p[2], s[3] - p[3]
        out[k] = [f[0] + c00 * de + c01 * dve, f[1] + c10 * de + c11 * dve,
                  f[2] + c00 * dn + c01 * dvn, f[3] + c10 * dn + c11 * dvn]
    return out


def replay(path):
    fixes = list(_fixes(path))
    if not fixes:
        return {"summary": {"distance_m": 0.0, "moving_time_s": 0.0}, "samples": []}
    times, xs, ys = [fixes[0][1]], [0.0], [0.0]
    for a, b in zip(fixes, fixes[1:]):
        de, dn = _step(a[2:4], b[2:4])
        times.append(b[1])
        xs.append(xs[-1] + de)
        ys.append(ys[-1] + dn)
    states = smooth(times, xs, ys)
    book = Bookkeeping()
    for k, (text, _t, _lat, _lon, _eph) in enumerate(fixes):
        speed = math.hypot(states[k][1], states[k][3])
        if k == 0:
            book.add(text, speed)
            continue

        def chord():
            return math.hypot(xs[k] - xs[k - 1], ys[k] - ys[k - 1])

        book.add(text, speed, times[k] - times[k - 1], chord)
    return book.document()
