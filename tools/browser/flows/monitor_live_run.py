"""Monitoring a real wearable (issue 22): a linked pacerd records the bundled park run, whose
start and finish are the runner's home, a privacy zone. The monitor's dashboard says "in a
private place" with no marker while the newest fix is at home, and otherwise shows the run
as a live trail that grows over server-sent events, never with a point inside the zone; the
run's end (idle) clears the trail."""

import math
import time

from browser.flows.monitor_dashboard import MONITOR, RUNNER, add_user, log_in, map_data, markers, trail_points, watch
from browser.runner import expect, flow

# The park run's first fix; the run ends 4 m from it.
HOME = (45.503503, 9.179490, 150)


def metres_from_home(point):
    lat, lon = point
    return math.hypot((lat - HOME[0]) * 111_320, (lon - HOME[1]) * 111_320 * math.cos(math.radians(HOME[0])))


def card_text(browser, device_id, css=""):
    """The card's (or its `css` part's) text, read in one go: SSE updates replace the card's
    markup, so an element found first may be gone when read."""
    return browser.run(f"var e = document.querySelector('#card-{device_id} {css}'); return e ? e.textContent : ''")


def private(browser, device_id):
    return "in a private place" in card_text(browser, device_id)


@flow("monitor-live-run", mail=True, tiles=True)
def monitor_live_run(t):
    browser, cloud = t.browser, t.cloud
    add_user(cloud, RUNNER, "Ann")
    add_user(cloud, MONITOR, "Carl")
    log_in(browser, cloud, RUNNER)
    browser.open(cloud.url + "/devices")
    browser.submit(form="form[action='/devices/link']")
    code = browser.text("#link-code")
    # A fix every 30 ms: the 17-minute run plays in about 30 s, a live position every 5 s.
    device = t.device(upload={"allow_http": True, "live_position_every_s": 5}, zones=[HOME], cycle=0.01)
    device.ctl("cloud", "link", cloud.url, code, "--name", "ann-pi")
    device_id = watch(t)
    browser.run("window.notReloaded = true")

    device.ctl("run", "start")
    device.gpsfake.release()
    started = time.monotonic()
    # Leaving home, the heartbeat says private only while the fixes are in the zone (about 1.7 s).
    seen_private_at_start = browser.wait(lambda: private(browser, device_id), timeout=8)
    # Out of the zone: the trail grows with the positions the device sends, with no reload.
    counts = []
    while time.monotonic() - started < 150 and len(counts) < 4:
        count = trail_points(map_data(browser, device_id))
        if count and (not counts or count > counts[-1]):
            counts.append(count)
            if len(counts) == 2:
                browser.shot("live-run")
        time.sleep(0.2)
    expect(len(counts) >= 4, f"the trail's point count went {counts} within 150 s")
    expect(browser.run("return window.notReloaded === true"), "the page reloaded")
    expect(len(markers(browser, device_id)) >= 2, "no dot and trail drawn on the map")

    # Home again at the finish: private, no marker; nothing on the trail ever came from inside the zone.
    trail = []
    def home_again():
        data = map_data(browser, device_id)
        if data:
            trail[:] = [point for line in data["trail"] for point in line]
        return private(browser, device_id)
    expect(browser.wait(home_again, timeout=150), f"no private place at the finish:\n{card_text(browser, device_id)}")
    expect(map_data(browser, device_id) is None and not markers(browser, device_id), "a marker is left at home")
    browser.shot("live-run-home")
    closest = min(metres_from_home(point) for point in trail)
    expect(closest > HOME[2], f"a trail point is {closest:.0f} m from home, inside the {HOME[2]} m zone")

    device.ctl("run", "stop")
    expect(browser.wait(lambda: card_text(browser, device_id, ".state") == "idle", timeout=10),
           f"the state is not idle:\n{card_text(browser, device_id)}")
    print(f"monitor-live-run: trail point counts {counts}, {len(trail)} points at the finish, the closest {closest:.0f} m from home;"
          f" private at the start seen: {seen_private_at_start}")
