"""The public alert page a relative opens from the SMS or e-mail (`GET /a/{secret}`): who (the
wearer, then the device), what, where (the last positions on the map, tiles from a local stub) and
when ("20:45 (3 min ago)")."""

import datetime as dt
import re
import uuid

from browser.chromium import DESKTOP, PHONE
from browser.runner import expect, flow

RELATIVE = "relative@example.org"
# What a device (or whoever holds its token) may put in a field the page shows.
HOSTILE_DEVICE_NAME = "trail <script>document.title='injected'</script> <b>runner</b>"
# The wearer's name ([profile] name), with a right-to-left override that would turn the text around.
WEARER = "Anna <i>Rossi</i>\u202e"
SHOWN_WEARER = "Anna <i>Rossi</i>"
HEADING = f"SOS from {SHOWN_WEARER} ({HOSTILE_DEVICE_NAME}): high heart rate"
# "20:45 (just now)", "20:45 UTC (12 s ago)": the one format of every alert's times.
WHEN = re.compile(r"^\d\d:\d\d( UTC)? \((just now|\d+ s ago)\)$")


def iso_now():
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def severe(entries, allowed=()):
    """The console's errors and warnings that contain none of the `allowed` texts."""
    return [(level, text) for level, text in entries
            if level in ("SEVERE", "WARNING") and not any(a in text for a in allowed)]


@flow("alert-page", mail=True, tiles=True)
def alert_page(t):
    browser, cloud = t.browser, t.cloud
    token = cloud.add_device("demo", email_address=RELATIVE)
    alert = {"alert_id": str(uuid.uuid4()), "sequence": 0, "type": "alert", "test": False, "kind": "hr_high",
             "time": iso_now(), "device": HOSTILE_DEVICE_NAME, "wearer": WEARER, "heart_rate": {"bpm": 201, "threshold_bpm": 190},
             "position": {"lat": 45.47791, "lon": 9.22414, "accuracy_m": 8.0, "time": iso_now()}, "battery_percent": 64}
    status, reply = cloud.request("POST", "/v1/alerts", alert, token=token)
    expect(status == 201 and reply and reply.get("page", "").startswith(cloud.url + "/a/"),
           f"POST /v1/alerts answered {status} {reply}")
    # A follow-up a little further on: the map shows both, the newest with its age.
    follow_up = dict(alert, sequence=1, type="follow_up", time=iso_now(),
                     position={"lat": 45.47912, "lon": 9.22630, "accuracy_m": 6.0, "time": iso_now()})
    status, _ = cloud.request("POST", "/v1/alerts", follow_up, token=token)
    expect(status == 201, f"the follow-up answered {status}")
    page = reply["page"]
    # The relative's e-mail carries the same link.
    mailed = t.mail.link(t.mail.wait_for(RELATIVE, subject=f"SOS from {SHOWN_WEARER}"), cloud.url + "/a/")
    expect(mailed == page, f"the e-mail links {mailed}, the API answered {page}")

    browser.open(page)
    expect(browser.status() == 200, f"the alert page answered {browser.status()}")
    expect(browser.wait(lambda: browser.run("return document.body.dataset.complete === '1'")), "the map was never drawn")
    browser.shot("page")
    expect(browser.text("h1") == HEADING, f"the heading is {browser.text('h1')!r}")
    body = browser.text()
    for shown in ("OPEN: this alert is active", "Who\nAnna <i>Rossi</i>\n", "45.479120, 9.226300 on OpenStreetMap", "within 6 m",
                  "201 bpm", "64 %"):
        expect(shown in body, f"the page does not show {shown!r}:\n{body}")
    expect("\u202e" not in body, "the wearer's right-to-left override reached the page")
    osm = browser.find("dd a").get_attribute("href")
    expect(osm.startswith("https://www.openstreetmap.org/?mlat=45.479120&mlon=9.226300"), f"the map link is {osm}")
    for label in ("Raised", "Last position"):
        when = browser.run("""return [...document.querySelectorAll('dt')].find(d => d.textContent === arguments[0])
                              .nextElementSibling.textContent.split(', ').pop()""", label)
        expect(WHEN.match(when), f"{label} says {when!r}, not a time like '20:45 (just now)'")
    # The map: both positions, the newest large with its time and age; tiles from the stub.
    markers = browser.run("return document.querySelectorAll('.leaflet-overlay-pane path.leaflet-interactive').length")
    expect(markers >= 3, f"the map has {markers} paths: the line, the older and the newest position expected")
    newest = browser.text(".leaflet-tooltip")
    expect(newest.startswith("Newest position, ") and WHEN.match(newest.removeprefix("Newest position, ")),
           f"the newest position's label is {newest!r}")
    expect(len(t.tiles.served) > 0, "the map loaded no tile from the stub")

    # A phone lays the page out at its own width (the viewport meta tag) and never scrolls sideways.
    document_width, viewport_width = browser.overflow()
    expect(viewport_width == PHONE.width, f"the layout viewport is {viewport_width} px wide on a {PHONE.width} px phone")
    expect(document_width <= viewport_width, f"the page is {document_width} px wide on a {viewport_width} px phone: it scrolls sideways")
    browser.shot("page", viewport=DESKTOP)

    # The device's text is shown as text: no element and no script came from it; the page's own
    # scripts are the map's data block, Leaflet and alert.js, all from the server.
    expect(HOSTILE_DEVICE_NAME in body, f"the device's name is not shown as it was sent:\n{body}")
    expect(not browser.find_all("b, i"), "markup from the device became elements of the page")
    scripts = [s.get_attribute("src") or s.get_attribute("type") for s in browser.find_all("script")]
    expect(scripts == ["application/json", cloud.url + "/assets/leaflet/leaflet.js", cloud.url + "/assets/pacer/alert.js"],
           f"the page's scripts are {scripts}")
    expect(browser.title == HEADING, f"the title is {browser.title!r}")
    logged = severe(browser.console())
    expect(not logged, f"the alert page logged: {logged}")

    # The Content-Security-Policy refuses an inline script put into the page.
    ran = browser.run("""
        window.violations = [];
        document.addEventListener('securitypolicyviolation', e => window.violations.push(e.effectiveDirective));
        const script = document.createElement('script');
        script.textContent = 'window.inlineRan = true';
        document.body.appendChild(script);
        return window.inlineRan === true""")
    expect(not ran, "an inline script ran on the alert page")
    # The violation event and the console line come asynchronously.
    browser.wait(lambda: browser.run("return window.violations.length") > 0, timeout=5)
    violations = browser.run("return window.violations")
    expect(violations == ["script-src-elem"], f"the CSP reported {violations} for the inline script")
    refusals = severe(browser.console_until("Content Security Policy", timeout=5))
    expect(refusals and all("Content Security Policy" in text for _, text in refusals),
           f"expected the CSP's refusal and nothing else in the console, got {refusals}")

    # No other site may frame it (frame-ancestors 'none'), where it may frame a page without the
    # headers (/health): the refusal is the page's own.
    viewport = "<meta name=viewport content='width=device-width'>"
    site = t.other_site({"/": f"{viewport}<iframe id=alert src='{page}'></iframe><iframe id=health src='{cloud.url}/health'></iframe>"})
    browser.open(site.url + "/", shot="framed")
    expect(browser.frame_location("#health") == cloud.url + "/health", "another site cannot frame even /health: the check proves nothing")
    expect(browser.frame_location("#alert") == "chrome-error://chromewebdata/",
           f"another site framed the alert page ({browser.frame_location('#alert')})")
    refusals = severe(browser.console_until("frame-ancestors"))
    expect(refusals and all("frame-ancestors 'none'" in text for _, text in refusals),
           f"expected the CSP's refusal to be framed and nothing else in the console, got {refusals}")

    status, headers = cloud.headers(page.removeprefix(cloud.url))
    # The origin alone as referrer (the tile server wants it; the path holds the secret).
    for name, value in (("X-Frame-Options", "DENY"), ("X-Content-Type-Options", "nosniff"),
                        ("Referrer-Policy", "strict-origin"), ("Cache-Control", "no-store")):
        expect(headers.get(name) == value, f"{name} is {headers.get(name)!r}")
    policy = headers.get("Content-Security-Policy", "")
    stub = t.tiles.template.split("/{z}")[0]
    expect("default-src 'none'" in policy and "unsafe" not in policy and "script-src 'self';" in policy
           and f"img-src 'self' data: {stub};" in policy, f"Content-Security-Policy is {policy!r}")

    # A wrong secret of the right shape: the not-found page, with the same headers.
    secret = page.rsplit("/", 1)[1]
    wrong = cloud.url + "/a/" + ("A" if secret[0] != "A" else "B") + secret[1:]
    browser.open(wrong, shot="not-found")
    expect(browser.status() == 404, f"a wrong secret answered {browser.status()}")
    expect(browser.text("h1") == "No such alert", f"a wrong secret shows {browser.text('h1')!r}")
    expect(HOSTILE_DEVICE_NAME not in browser.text(), "a wrong secret shows the alert")
    document_width, viewport_width = browser.overflow()
    expect(document_width <= viewport_width, f"the not-found page is {document_width} px wide on a {viewport_width} px phone")
    # Chromium logs the 404 itself; nothing else may appear.
    unexpected = severe(browser.console(), allowed=("status of 404",))
    expect(not unexpected, f"the not-found page logged: {unexpected}")
