"""Monitoring (issue 22): a runner invites a monitor by e-mail, the monitor accepts, and the
dashboard follows the runner live (server-sent events, a Leaflet map): positions move the map
and its trail, a privacy zone hides it, an alert appears in red, "I am on my way" is pressed and
the runner's pacerd (the device's token in its [upload], speaking into WAV files) says it within
10 s, a cancel shows as a false alarm."""

import datetime as dt
import json
import os
import subprocess
import time
import uuid

from browser.chromium import DESKTOP
from browser.runner import expect, flow

RUNNER, MONITOR = "ann@example.org", "carl@example.org"
PASSWORD = "correct horse battery"
RUN = str(uuid.uuid4())


def iso_now():
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def add_user(cloud, address, name):
    run = subprocess.run([cloud.binary, "user", "add", address, "--display-name", name, "--confirmed", "--database", cloud.database],
                         input=PASSWORD + "\n", capture_output=True, text=True, timeout=60)
    expect(run.returncode == 0, f"pacer-cloud user add {address}: {run.stderr.strip()}")


def submit(browser, form="form", shot=None):
    """The account pages' buttons carry no type attribute (a button submits by default)."""
    browser.click(f"{form} button", shot=shot)


def log_in(browser, cloud, address):
    browser.driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    browser.open(cloud.url + "/login")
    browser.fill({"email": address, "password": PASSWORD})
    submit(browser)
    expect(browser.url == cloud.url + "/account", f"logging in as {address} ended on {browser.url}")


def map_data(browser, device_id):
    raw = browser.run(f"var e = document.getElementById('map-{device_id}'); return e ? e.dataset.map : null")
    return json.loads(raw) if raw else None


def trail_points(data):
    """The number of points of a map's trail (lines of points, broken at private places)."""
    return sum(len(line) for line in (data or {}).get("trail", []))


def markers(browser, device_id):
    """The dot, ring and trail Leaflet drew on the card's map."""
    return browser.find_all(f"#map-{device_id} path.leaflet-interactive")


def watch(t):
    """The runner (signed in) invites the monitor, who accepts from the e-mailed link and lands
    on the live dashboard; the card's device id."""
    browser, cloud = t.browser, t.cloud
    log_in(browser, cloud, RUNNER)
    browser.open(cloud.url + "/monitoring", shot="runner-monitoring")
    browser.fill({"email": MONITOR}, form="form[action='/monitoring/invite']")
    submit(browser, form="form[action='/monitoring/invite']", shot="invited")
    expect("We sent an invitation to carl@example.org" in browser.text(), f"no invitation sent:\n{browser.text()}")
    link = t.mail.link(t.mail.wait_for(MONITOR, subject="watch over"), cloud.url + "/monitoring/accept?token=")
    log_in(browser, cloud, MONITOR)
    browser.open(link, shot="accept")
    submit(browser, shot="dashboard-empty")
    expect(browser.url == cloud.url + "/watch", f"accepting ended on {browser.url}")
    expect("Ann" in browser.text("main"), f"the dashboard does not show Ann:\n{browser.text('main')}")
    device_id = browser.find("section.card").get_attribute("id").removeprefix("card-")
    expect(browser.wait(lambda: browser.text("#live") == "live", timeout=10), f"the stream is {browser.text('#live')!r}")
    expect(browser.run("return !!window.L"), "Leaflet did not load")
    expect(browser.find_all("nav.top a[href='/runs']"), "the dashboard has no top navigation bar")
    return device_id


@flow("monitor-dashboard", mail=True, tiles=True)
def monitor_dashboard(t):
    browser, cloud = t.browser, t.cloud
    add_user(cloud, RUNNER, "Ann")
    add_user(cloud, MONITOR, "Carl")
    token = cloud.add_device("ann-pacer")
    cloud.cli("device", "assign", "ann-pacer", RUNNER)
    device_id = watch(t)

    # The runner moves: every position moves the dot and lengthens the trail, without a reload.
    browser.run("window.notReloaded = true")
    for step in range(5):
        lat = 45.4700 + step * 0.0005
        status, _ = cloud.request("PUT", "/v1/position", {"time": iso_now(), "lat": lat, "lon": 9.2241, "accuracy_m": 6.0,
                                                          "run_id": RUN}, token=token)
        expect(status == 200, f"PUT /v1/position answered {status}")
        shown = browser.wait(lambda: (map_data(browser, device_id) or {}).get("lat") == lat, timeout=2)
        expect(shown, f"position {step} was not on the map within 2 s: {map_data(browser, device_id)}")
        expect(trail_points(map_data(browser, device_id)) == step + 1, f"the trail after position {step}: {map_data(browser, device_id)}")
    expect(len(markers(browser, device_id)) >= 2, "no trail and dot drawn on the map")
    expect(browser.run("return window.notReloaded === true"), "the page reloaded")
    expect(browser.wait(lambda: t.tiles.served, timeout=5), "the map loaded no tile from the configured tile server")
    browser.shot("dashboard-moving")

    # Home (a privacy zone): the heartbeat says so, and the card says "in a private place" with no
    # position, no map, no marker; the last position is not shown, however recent.
    heartbeat = {"time": iso_now(), "state": "recording", "sos_monitoring": True, "battery_percent": 77, "in_private_place": True}
    status, _ = cloud.request("PUT", "/v1/device/state", heartbeat, token=token)
    expect(status == 200, f"PUT /v1/device/state answered {status}")
    card = f"#card-{device_id}"
    expect(browser.wait(lambda: "in a private place" in browser.text(card), timeout=2), f"no private place shown:\n{browser.text(card)}")
    expect("45.47" not in browser.text(card) and map_data(browser, device_id) is None and not markers(browser, device_id),
           f"a position is still shown in the private place: {browser.text(card)} {map_data(browser, device_id)}")
    browser.shot("dashboard-private")
    # Out again: the trail goes on as a second line, never joined across the private place.
    status, _ = cloud.request("PUT", "/v1/device/state", dict(heartbeat, time=iso_now(), in_private_place=False), token=token)
    expect(status == 200, f"PUT /v1/device/state answered {status}")
    status, _ = cloud.request("PUT", "/v1/position", {"time": iso_now(), "lat": 45.4710, "lon": 9.2250, "accuracy_m": 6.0,
                                                      "run_id": RUN}, token=token)
    expect(status == 200, f"PUT /v1/position answered {status}")
    expect(browser.wait(lambda: (map_data(browser, device_id) or {}).get("lat") == 45.4710, timeout=2), "the position after home was not shown")
    lines = [len(line) for line in map_data(browser, device_id)["trail"]]
    expect(lines == [5, 1], f"the trail's lines are {lines}, not [5, 1]")
    expect(browser.run("return window.notReloaded === true"), "the page reloaded")

    # The runner's wearable: pacerd online with the device's token, listening for answers. Started
    # only now: its heartbeat says it is idle, which ends the trail the positions above drew.
    device = t.device(upload={"url": cloud.url, "allow_http": True, "token": token})

    # The strap reports 215 bpm: the alert appears, in red, within 2 s.
    alert_id = str(uuid.uuid4())
    alert = {"alert_id": alert_id, "sequence": 0, "type": "alert", "test": False, "kind": "hr_high", "time": iso_now(),
             "heart_rate": {"bpm": 215, "threshold_bpm": 190}, "position": {"lat": 45.4720, "lon": 9.2241, "accuracy_m": 8.0},
             "run_id": RUN}
    sent = time.monotonic()
    status, _ = cloud.request("POST", "/v1/alerts", alert, token=token)
    expect(status == 201, f"POST /v1/alerts answered {status}")
    expect(browser.wait(lambda: "215 bpm" in browser.text("main"), timeout=2), f"the alert was not shown within 2 s:\n{browser.text('main')}")
    shown_after = time.monotonic() - sent
    color = browser.run("return getComputedStyle(document.querySelector('.alert.open')).color")
    expect(color == "rgb(187, 0, 0)", f"the open alert is {color}, not red")
    expect("alert-open" in browser.find("section.card").get_attribute("class"), "the card is not marked as alerting")
    browser.shot("dashboard-alert")
    browser.shot("dashboard-alert", viewport=DESKTOP)

    # "I am on my way": stored, shown, and said by pacerd (a WAV file of it) within 10 s.
    pressed = time.monotonic()
    browser.click("button[value='on_my_way']", shot="answered")
    expect("Carl is on the way" in browser.text("main"), f"the answer is not shown:\n{browser.text('main')}")
    said = device.wait_said("Carl is on the way", timeout=10)
    spoken_after = time.monotonic() - pressed
    expect(said == [("sos_answer", "Carl is on the way")], f"pacerd said {said}")
    wavs = [name for name in os.listdir(os.path.join(device.dir, "speech")) if name.endswith("-sos_answer.wav")]
    expect(len(wavs) == 1 and os.path.getsize(os.path.join(device.dir, "speech", wavs[0])) > 44, f"the answer's WAV files: {wavs}")
    expect("Carl: on my way" in device.ctl("sos"), f"pacerctl sos does not show the answer:\n{device.ctl('sos')}")
    expect(browser.wait(lambda: browser.text("#live") == "live", timeout=10), "the stream did not come back after the answer")

    # The runner cancels: the dashboard shows the false alarm, no longer in red.
    status, _ = cloud.request("POST", "/v1/alerts", dict(alert, sequence=1, type="cancelled", time=iso_now()), token=token)
    expect(status == 201, f"the cancel answered {status}")
    expect(browser.wait(lambda: "false alarm" in browser.text("main"), timeout=2), f"the cancel was not shown:\n{browser.text('main')}")
    expect(not browser.find_all(".alert.open"), "the cancelled alert is still shown as open")
    browser.shot("dashboard-cancelled")
    document_width, viewport_width = browser.overflow()
    browser.use(browser.viewport)
    expect(document_width <= viewport_width, f"the dashboard is {document_width} px wide on a {viewport_width} px phone")
    print(f"monitor-dashboard: alert shown {shown_after * 1000:.0f} ms after POST /v1/alerts answered; "
          f"\"on my way\" said by pacerd {spoken_after * 1000:.0f} ms after it was pressed")
