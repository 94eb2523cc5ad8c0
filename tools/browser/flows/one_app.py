"""One app (issue 33): every page of a signed-in runner in one frame, the nav marking the page it
is on and leading to Devices, Import and Monitoring; `/` leading to the runs; an unknown URL an
HTML page with the nav; a field's error beside it and the field aria-invalid; an empty heart-rate
page saying what to do; every page fitting a phone, in light and in dark (the system's scheme,
emulated through the DevTools protocol). Screenshots of each page: phone and desktop, light and
dark."""

import datetime as dt

from browser.chromium import DESKTOP, PHONE
from browser.flows.run_page import check_fits_phone, log_in, severe, wait_complete
from browser.runner import expect, flow
from pacertools import runs

EMAIL, PASSWORD = "runner@example.org", "a long enough pass phrase"

# Path, the nav entry marked on it, and whether its script sets the complete flag.
PAGES = [
    ("/runs", "Runs", False), ("/stats", "Statistics", False), ("/plan", "Plan", False), ("/heart", "Health", True),
    ("/devices", "Devices", False), ("/import", "Import", False), ("/monitoring", "Monitoring", False),
    ("/account", "Account", False),
]


def scheme(browser, name):
    browser.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": name}]})


def luminance(css_colour):
    """0 (black) to 255 (white) of an "rgb(r, g, b)" or "rgba(…)" computed colour."""
    parts = [float(p) for p in css_colour[css_colour.index("(") + 1:-1].split(",")[:3]]
    return 0.2126 * parts[0] + 0.7152 * parts[1] + 0.0722 * parts[2]


def shots(browser, name):
    """The page at both sizes in both schemes; the scheme is light again afterwards."""
    for colours in ("light", "dark"):
        scheme(browser, colours)
        browser.shot(f"{name}-{colours}", viewport=PHONE)
        browser.shot(f"{name}-{colours}", viewport=DESKTOP)
    scheme(browser, "light")


@flow("one-app")
def one_app(t):
    browser, cloud = t.browser, t.cloud
    cloud.add_account(EMAIL, PASSWORD, timezone="Europe/Rome")
    log_in(browser, cloud)
    # Nothing yet: the heart-rate page says what to do instead of drawing an empty chart.
    browser.open(cloud.url + "/heart")
    wait_complete(browser)
    expect("link a device" in browser.text("#no-runs") and not browser.find_all("#runs-chart"),
           f"the empty heart-rate page shows: {browser.text()}")
    shots(browser, "heart-empty")
    browser.open(cloud.url + "/runs")
    expect("import a file" in browser.text(), f"the empty runs page shows: {browser.text()}")

    token = cloud.add_device("demo-wearable")
    cloud.cli("device", "assign", "demo-wearable", EMAIL)
    run_id = runs.upload(cloud.url, token, runs.load(start=dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)))

    browser.open(cloud.url + "/")
    expect(browser.url == cloud.url + "/runs", f"/ went to {browser.url}")
    for path, section, scripted in PAGES:
        browser.open(cloud.url + path)
        if scripted:
            wait_complete(browser)
        marked = [a.text for a in browser.find_all("nav.top a[aria-current='page']")]
        expect(marked == [section], f"{path} marks {marked} in its nav")
        for href in ("/devices", "/import", "/monitoring"):
            expect(browser.find_all(f"nav.top a[href='{href}']"), f"{path} has no {href} in its nav")
        icon = browser.find("link[rel='icon']").get_attribute("href")
        expect("/assets/pacer/icon.svg?v=" in icon, f"{path} links the icon {icon}")
        check_fits_phone(browser, path)
        scheme(browser, "dark")
        background = browser.run("return getComputedStyle(document.body).backgroundColor")
        text = browser.run("return getComputedStyle(document.body).color")
        expect(luminance(text) - luminance(background) > 120 if background != "rgba(0, 0, 0, 0)" else luminance(text) > 150,
               f"{path} in dark: text {text} on {background}")
        scheme(browser, "light")
        shots(browser, path.strip("/").replace("/", "-"))
        logged = severe(browser.console())
        expect(not logged, f"{path} logged: {logged}")

    browser.open(cloud.url + f"/runs/{run_id}")
    wait_complete(browser)
    axis = browser.run("var y = window.pacerCharts.pace.scales.y; return [y.min, y.max]")
    expect(axis[1] < 15 * 60, f"the pace axis runs from {axis[0]} to {axis[1]} s/km")
    expect([a.text for a in browser.find_all("nav.top a[aria-current='page']")] == ["Runs"], "the run page marks no Runs")
    shots(browser, "run")

    # An unknown URL: a page of the app, with the nav and a way back.
    browser.open(cloud.url + "/no/such/page")
    expect(browser.status() == 404 and "No such page" in browser.text("h1"), f"the unknown URL shows {browser.text()}")
    expect(browser.find_all("nav.top a[href='/runs']") and browser.find_all("a[href='/']"), "the 404 page has no way back")
    shots(browser, "not-found")

    # A field's error beside it, in words, the field marked.
    browser.open(cloud.url + "/account")
    browser.fill({"max_hr": "300"}, form="form[action='/account/settings']")
    browser.click("form[action='/account/settings'] button", shot="settings-refused")
    field = browser.find("input[name='max_hr']")
    expect(field.get_attribute("aria-invalid") == "true", "the refused field is not aria-invalid")
    beside = browser.text("#max_hr-error")
    expect("240" in beside and "max_hr" not in browser.text(), f"the error beside the field says {beside!r}")
    zone = browser.find("select[name='timezone']")
    expect(zone.get_attribute("value") == "Europe/Rome", f"the time zone list shows {zone.get_attribute('value')}")
    shots(browser, "settings-refused")

    # Signed out: / leads to the log-in page, whose frame offers log-in and sign-up.
    browser.click("form[action='/logout'] button")
    browser.open(cloud.url + "/")
    expect(browser.url == cloud.url + "/login", f"/ signed out went to {browser.url}")
    shots(browser, "login")
    # A page asked for while signed out: the log-in brings the runner to it.
    browser.open(cloud.url + "/stats")
    expect(browser.status() == 401 and browser.find_all("form[action='/login']"), "/stats signed out shows no log-in form")
    browser.fill({"email": EMAIL, "password": PASSWORD}, form="form[action='/login']")
    browser.click("form[action='/login'] button")
    expect(browser.url == cloud.url + "/stats", f"the log-in led to {browser.url}")
