"""The cloud's first journey end to end (issue #20): a runner signs up and confirms through the
e-mailed link, logs in, links the wearable with the code of My devices (`pacerctl cloud link`),
the wearable records the bundled park run and uploads it into the account, and a notice an
operator types (`pacer-cloud notice send`) is spoken by the wearable once, and not again after
a restart."""

import json
import os
import re
import time

from browser.runner import expect, flow

EMAIL = "anna@example.org"
PASSWORD = "a long pass phrase for Anna"
NOTICE = "Dinner is at eight, see you at home."


@flow("first-run", mail=True)
def first_run(t):
    browser, cloud = t.browser, t.cloud
    browser.open(cloud.url + "/signup")
    browser.fill({"email": EMAIL, "display_name": "Anna", "timezone": "Europe/Rome", "password": PASSWORD})
    browser.submit()
    confirm = t.mail.link(t.mail.wait_for(EMAIL, subject="Confirm"), cloud.url + "/confirm?token=")
    browser.open(confirm)
    browser.submit()
    expect(browser.text("h1") == "Address confirmed", f"confirming: {browser.text()}")
    browser.open(cloud.url + "/login")
    browser.fill({"email": EMAIL, "password": PASSWORD})
    browser.submit()
    expect(browser.url == cloud.url + "/account", f"log-in went to {browser.url}: {browser.text()}")

    browser.click("a[href='/devices']")
    browser.submit(form="form[action='/devices/link']", shot="code")
    code = browser.text("#link-code")

    # The wearable knows no cloud until it is linked: plain http is allowed to this loopback cloud.
    device = t.device(upload={"allow_http": True})
    linked = device.ctl("cloud", "link", cloud.url, code, "--name", "anna-pi")
    expect("anna-pi" in linked and "Anna" in linked, f"pacerctl cloud link printed:\n{linked}")
    expect(code not in linked, "pacerctl printed the code")
    shown = device.ctl("cloud")
    expect(cloud.url in shown and "anna-pi" in shown, f"pacerctl cloud shows:\n{shown}")

    device.record_park_run()
    # The device's own token (kept beside its store) sees the run; the account owns the device.
    with open(os.path.join(device.dir, "cloud-link.json")) as f:
        token = json.load(f)["token"]
    runs = []
    deadline = time.monotonic() + 60
    while not runs and time.monotonic() < deadline:
        status, reply = cloud.request("GET", "/v1/runs", token=token)
        runs = (reply or {}).get("runs", []) if status == 200 else []
        time.sleep(0.2)
    expect(len(runs) == 1, f"the cloud has {runs} for the device")
    listed = cloud.cli("device", "list")
    expect(any("anna-pi" in line and EMAIL in line for line in listed.splitlines()), f"pacer-cloud device list:\n{listed}")
    browser.open(cloud.url + "/devices", shot="linked")
    # In Anna's zone and the pages' one format: "Last seen: Sat 28 Nov, 15:05 (2 min ago)".
    seen = re.search(r"Last seen: [A-Z][a-z]{2} \d{1,2} [A-Z][a-z]{2}, \d\d:\d\d \(", browser.text())
    expect("anna-pi" in browser.text() and seen and "UTC" not in browser.text(), f"My devices shows:\n{browser.text()}")

    # An operator's notice: spoken once, acknowledged, and not again after a restart.
    cloud.cli("notice", "send", "anna-pi", NOTICE)
    device.ctl("sync")
    said = device.wait_said("Dinner is at eight")
    expect(len(said) == 1 and said[0][0] == "notice", f"pacerd said {said}")
    device.restart()
    # A later notice as a marker: notices are said in order, so once it is said, a repeat of
    # the first would have been said before it.
    cloud.cli("notice", "send", "anna-pi", "Marker after the restart.")
    device.ctl("sync")
    device.wait_said("Marker after the restart")
    again = [entry for entry in device.said() if "Dinner is at eight" in entry[1]]
    expect(len(again) == 1, f"the notice was said {len(again)} times across the restart: {again}")
