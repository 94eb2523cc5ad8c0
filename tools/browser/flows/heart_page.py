"""The runner's heart-rate page (/heart): the demo run uploaded twice as the device does (two and
nine days ago), and a heartbeat carrying the strap's newest reading, the profile's maximum and a
day's summary between runs; the page shows them and draws the per-run chart under its
Content-Security-Policy."""

import datetime as dt

from browser.chromium import DESKTOP
from browser.flows.run_page import check_fits_phone, drawn_pixels, log_in, severe, wait_complete
from browser.runner import expect, flow
from pacertools import runs

EMAIL, PASSWORD = "runner@example.org", "a long enough pass phrase"


def iso(moment):
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@flow("heart-page")
def heart_page(t):
    browser, cloud = t.browser, t.cloud
    cloud.add_account(EMAIL, PASSWORD, timezone="UTC")
    token = cloud.add_device("demo-wearable")
    cloud.cli("device", "assign", "demo-wearable", EMAIL)
    now = dt.datetime.now(dt.timezone.utc)
    for days in (9, 2):
        runs.upload(cloud.url, token, runs.load(start=now - dt.timedelta(days=days)))
    yesterday = (now - dt.timedelta(days=1)).date()
    beat = {"time": iso(now), "state": "idle", "sos_monitoring": False, "max_hr_bpm": 186,
            "heart_rate": {"bpm": 62, "time": iso(now - dt.timedelta(minutes=3))},
            "hr_daily": [{"date": yesterday.isoformat(), "count": 1800, "min_bpm": 47, "resting_bpm": 52}]}
    status, _ = cloud.request("PUT", "/v1/device/state", beat, token=token)
    expect(status == 200, f"the heartbeat was answered {status}")
    log_in(browser, cloud)

    browser.click("nav.top a[href='/heart']")
    wait_complete(browser)
    browser.shot("heart")
    newest, resting = browser.text("#newest"), browser.text("#resting")
    expect(newest in ("62 bpm, 3 min ago", "62 bpm, 4 min ago"), f"the newest reading shows {newest!r}")
    expect(resting == f"52 bpm on {yesterday.day} {yesterday:%b}", f"the resting value shows {resting!r}")
    page = browser.text()
    expect("from a maximum of 186 bpm" in page, "the zones are not from the device's maximum")
    expect("This week" in page or "Z5" in page, f"no zones per week: {page!r}")
    # Before the pixel reads below: reading one canvas twice makes Chromium warn about readbacks.
    logged = severe(browser.console())
    expect(not logged, f"the heart-rate page logged: {logged}")
    labels = browser.run("return window.pacerCharts.runs.data.labels")
    expect(len(labels) == 2, f"the chart has labels {labels!r}, one per run expected")
    for colour in ((192, 57, 43), (127, 29, 29)):
        pixels = drawn_pixels(browser, "runs-chart", colour)
        expect(pixels > 100, f"the per-run chart has {pixels} pixels of its {colour} line")
    check_fits_phone(browser, "the heart-rate page")
    browser.shot("heart", viewport=DESKTOP)

    status, _ = cloud.headers("/heart")
    expect(status == 401, f"the heart-rate page without a session answered {status}")
