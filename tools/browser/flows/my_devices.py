"""My devices (`/devices`): log in, press "Link a device", read the one-time code off the page,
link a device with it as `pacerctl cloud link` does (`POST /v1/link`), and see it listed."""

import re
import subprocess

from browser.runner import expect, flow

EMAIL = "runner@example.org"
PASSWORD = "a long enough password 42"


@flow("my-devices")
def my_devices(t):
    browser, cloud = t.browser, t.cloud
    added = subprocess.run([cloud.binary, "user", "add", EMAIL, "--display-name", "Ann", "--confirmed", "--database", cloud.database],
                           input=PASSWORD + "\n", capture_output=True, text=True, timeout=60)
    expect(added.returncode == 0, f"pacer-cloud user add exited {added.returncode}: {added.stderr.strip()}")

    browser.open(cloud.url + "/login")
    browser.fill({"email": EMAIL, "password": PASSWORD})
    # The pages' buttons submit by default (no type attribute): clicked, as a person does.
    browser.click("form[action='/login'] button")
    expect(browser.url.endswith("/account"), f"the log-in went to {browser.url}")
    browser.click("a[href='/devices']", shot="empty")
    expect("No device yet" in browser.text(), f"the page shows:\n{browser.text()}")

    browser.click("form[action='/devices/link'] button", shot="code")
    code = browser.text("#link-code")
    expect(len(code) == 9 and code[4] == "-", f"the code is {code!r}")
    expect(f"pacerctl cloud link {cloud.url} {code}" in browser.text(), f"the page does not show the command:\n{browser.text()}")
    width, viewport = browser.overflow()
    expect(width <= viewport, f"the code page scrolls sideways on a phone ({width} > {viewport} CSS pixels)")

    status, grant = cloud.request("POST", "/v1/link", {"code": code, "name": "ann-pi"})
    expect(status == 201 and grant and grant.get("device") == "ann-pi" and grant.get("account") == "Ann",
           f"POST /v1/link answered {status} {grant}")
    status, again = cloud.request("POST", "/v1/link", {"code": code})
    # Used, unknown and expired codes get one answer: a guesser learns nothing (issue 31).
    expect(status == 404 and again["error"]["code"] == "code_invalid", f"the code worked twice: {status} {again}")

    browser.open(cloud.url + "/devices", shot="linked")
    # The account's zone, in the pages' one format, with how long ago: "Last seen: Sat 28 Nov, 14:05 (just now)".
    seen = re.search(r"Last seen: [A-Z][a-z]{2} \d{1,2} [A-Z][a-z]{2}, \d\d:\d\d \((just now|\d+ s ago)\)", browser.text())
    expect("ann-pi" in browser.text() and "Unlink ann-pi" in browser.text() and seen and "UTC" not in browser.text(),
           f"the page shows:\n{browser.text()}")
    browser.click("a[href$='/unlink']", shot="unlink")
    browser.click("form[action$='/unlink'] button", shot="unlinked")
    expect("Unlinked" in browser.text(), f"after unlinking the page shows:\n{browser.text()}")
    status, _ = cloud.request("GET", "/v1/runs", token=grant["token"])
    expect(status == 401, f"the unlinked device's token still answers {status}")
