"""The runner's pages with the bundled demo run (tools/demo-data/park-3k) uploaded as the device
does: the runs list, and the run's page with its map (tiles from a local stub, or none) and its
pace and heart-rate charts, all drawn under the page's Content-Security-Policy."""

import datetime as dt
import os
import re
import urllib.request

from browser.chromium import DESKTOP, PHONE
from browser.runner import expect, flow
from browser.servers import Cloud
from pacertools import runs

EMAIL, PASSWORD = "runner@example.org", "a long enough pass phrase"


def severe(entries):
    """Errors and warnings in the console; the browser's own asking for /favicon.ico (none
    here) is no error of the page."""
    return [(level, text) for level, text in entries if level in ("SEVERE", "WARNING") and "/favicon.ico" not in text]


def demo_run_for(cloud):
    """An account with the demo wearable, the demo run uploaded by it; the run's id."""
    cloud.add_account(EMAIL, PASSWORD, timezone="Europe/Rome")
    token = cloud.add_device("demo-wearable")
    cloud.cli("device", "assign", "demo-wearable", EMAIL)
    return runs.upload(cloud.url, token, runs.load())


def log_in(browser, cloud):
    browser.open(cloud.url + "/login")
    browser.fill({"email": EMAIL, "password": PASSWORD})
    browser.click("form button")
    expect(browser.url == cloud.url + "/account", f"log-in went to {browser.url}")


def wait_complete(browser):
    expect(browser.wait(lambda: browser.run("return document.body.dataset.complete === '1'"), timeout=15),
           f"the run page never set its complete flag; the console: {browser.console()}")


def drawn_pixels(browser, canvas_id, rgb):
    """Pixels of the canvas near the colour `rgb`: the chart's line, not only its axes."""
    return browser.run("""
        const [id, r, g, b] = arguments;
        const canvas = document.getElementById(id);
        const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let count = 0;
        for (let i = 0; i < data.length; i += 4) {
          if (data[i + 3] > 0 && Math.abs(data[i] - r) < 48 && Math.abs(data[i + 1] - g) < 48 && Math.abs(data[i + 2] - b) < 48) count++;
        }
        return count;""", canvas_id, *rgb)


def check_drawn(browser, samples):
    points = browser.run("return window.pacerMap.track.getLatLngs().length")
    expect(0 < points <= 2000 and points <= samples, f"the map's track has {points} points ({samples} samples)")
    expect(browser.run("return document.querySelectorAll('.leaflet-overlay-pane path').length") >= 1,
           "no track drawn in the map's overlay pane")
    for canvas, colour in (("pace-chart", (31, 95, 191)), ("hr-chart", (192, 57, 43))):
        pixels = drawn_pixels(browser, canvas, colour)
        expect(pixels > 200, f"the {canvas} canvas has {pixels} pixels of its line")


def check_fits_phone(browser, page):
    document_width, viewport_width = browser.overflow()
    expect(viewport_width == PHONE.width, f"the layout viewport is {viewport_width} px on a {PHONE.width} px phone")
    expect(document_width <= viewport_width, f"{page} is {document_width} px wide on a {viewport_width} px phone: it scrolls sideways")


@flow("run-page", tiles=True)
def run_page(t):
    browser, cloud = t.browser, t.cloud
    samples = runs.load()
    run_id = demo_run_for(cloud)
    log_in(browser, cloud)

    browser.open(cloud.url + "/runs", shot="runs-list")
    expect(browser.status() == 200, f"/runs answered {browser.status()}")
    entry = browser.text("ul.runs")
    # The pages' one format: the year only when it is not this year's.
    shown = "Sun 10 May, 09:30" if dt.datetime.now(dt.timezone.utc).year == 2026 else "Sun 10 May 2026, 09:30"
    expect(shown in entry and "3.00 km" in entry, f"the list shows {entry!r}")
    check_fits_phone(browser, "the runs list")
    browser.shot("runs-list", viewport=DESKTOP)

    browser.click(f"a[href='/runs/{run_id}']")
    wait_complete(browser)
    browser.shot("run")
    expect(browser.url == f"{cloud.url}/runs/{run_id}", f"the list's link went to {browser.url}")
    check_drawn(browser, len(samples))
    marks = browser.run("return document.querySelectorAll('.leaflet-overlay-pane path').length")
    # The track, start, finish and the 1 and 2 km marks.
    expect(marks >= 5, f"the map has {marks} paths: the track, start, finish and km marks expected")
    expect(len(t.tiles.served) > 0, "the map loaded no tile from the stub")
    splits = browser.text("table")
    expect(re.search(r"\b3\b", splits) and "/km" in splits, f"the splits table shows {splits!r}")
    check_fits_phone(browser, "the run page")
    logged = severe(browser.console())
    expect(not logged, f"the run page logged: {logged}")
    browser.shot("run", viewport=DESKTOP)

    status, headers = cloud.headers(f"/runs/{run_id}")
    expect(status == 401, f"the run page without a session answered {status}")
    # The policy the signed-in page gets (the page itself may not fetch: connect-src is 'none').
    session = browser.driver.get_cookie("pacer_session")["value"]
    request = urllib.request.Request(f"{cloud.url}/runs/{run_id}", headers={"Cookie": f"pacer_session={session}"})
    with urllib.request.urlopen(request, timeout=15) as answer:
        policy = answer.headers.get("Content-Security-Policy", "")
    stub = t.tiles.template.split("/{z}")[0]
    expect(f"img-src 'self' {stub};" in policy and "script-src 'self';" in policy and "unsafe" not in policy,
           f"the run page's policy is {policy!r}")

    # Statistics: the demo run's records and week.
    browser.click("nav.top a[href='/stats']", shot="stats")
    stats = browser.text()
    expect("1 km" in stats and "Week of 4 May 2026" in stats, f"the statistics show {stats!r}")
    check_fits_phone(browser, "the statistics page")


@flow("run-page-no-tiles")
def run_page_without_tiles(t):
    browser = t.browser
    # Its own pacer-cloud, in "no tiles" mode.
    directory = os.path.join(t.directory, "no-tiles")
    os.makedirs(directory)
    cloud = Cloud(t.cloud.binary, directory, extra=["--tile-url", "none"])
    try:
        run_id = demo_run_for(cloud)
        log_in(browser, cloud)
        browser.open(f"{cloud.url}/runs/{run_id}")
        wait_complete(browser)
        browser.shot("run")
        check_drawn(browser, len(runs.load()))
        expect(not browser.find_all(".leaflet-tile"), "a tile layer was made with --tile-url none")
        logged = severe(browser.console())
        expect(not logged, f"the run page without tiles logged: {logged}")
    finally:
        cloud.stop()
