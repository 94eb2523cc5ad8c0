"""The training plan in the browser: a session for today with a repeat (6 x 400 m at 3:10-3:30 /km,
200 m recover) made with the form, its row added and removed by the page's script; it shows on the
month view (today marked) and in the upcoming list; edited; marked done; and the device's sync
section carries it until then. At a phone's width, without sideways scrolling or console errors."""

import datetime
import json
import zoneinfo

from selenium.webdriver.support.ui import Select

from browser.chromium import DESKTOP, PHONE
from browser.runner import expect, flow

EMAIL, PASSWORD, ZONE = "planner@example.org", "a long enough pass phrase", "Europe/Rome"


def fits_phone(browser, page):
    document_width, viewport_width = browser.overflow()
    expect(viewport_width == PHONE.width, f"{page}: the layout viewport is {viewport_width} px on a {PHONE.width} px phone")
    expect(document_width <= viewport_width, f"{page} is {document_width} px wide on a {viewport_width} px phone: it scrolls sideways")


def no_console_errors(browser, page):
    logged = [(level, text) for level, text in browser.console() if level in ("SEVERE", "WARNING") and "/favicon.ico" not in text]
    expect(not logged, f"{page} logged: {logged}")


def choose(browser, name, value):
    Select(browser.find(f"[name='{name}']")).select_by_value(value)


def planned_sessions(cloud, token):
    status, body = cloud.request("GET", "/v1/device/sync", token=token)
    expect(status == 200 and body is not None, f"the device's sync answered {status}")
    plan = body["sections"].get("plan")
    expect(plan is not None, f"no plan section for the account's device: {json.dumps(body)[:300]}")
    return plan["sessions"]


def fill_session(browser, name, rows):
    """The session form's name and step rows: each a dict of a row's fields without the
    `stepN_` prefix; `type` and `target` are chosen from their lists, the rest typed."""
    browser.fill({"name": name}, form="#session-form")
    for number, row in enumerate(rows, start=1):
        for key, value in row.items():
            if key in ("type", "target"):
                choose(browser, f"step{number}_{key}", value)
            else:
                browser.fill({f"step{number}_{key}": value}, form="#session-form")


def signed_in_runner(t, email, password, device):
    """An account in ZONE owning `device` (its token returned), signed in; today in ZONE."""
    browser, cloud = t.browser, t.cloud
    cloud.add_account(email, password, timezone=ZONE)
    token = cloud.add_device(device)
    cloud.cli("device", "assign", device, email)
    browser.open(cloud.url + "/login")
    browser.fill({"email": email, "password": password})
    browser.submit()
    return token, datetime.datetime.now(zoneinfo.ZoneInfo(ZONE)).date()


@flow("plan")
def plan(t):
    browser, cloud = t.browser, t.cloud
    token, today = signed_in_runner(t, EMAIL, PASSWORD, "planner-pacer")

    browser.click("nav.top a[href='/plan']", shot="empty")
    expect(browser.status() == 200 and browser.text("h1") == "Training plan", f"the plan page: {browser.text()[:300]}")
    expect(browser.find("#today .day").text == str(today.day), f"today's cell says {browser.find('#today').text!r}")
    expect(f"{today:%B %Y}" in browser.text("#month-label"), f"the month shown is {browser.text('#month-label')!r}")

    browser.click("#new-session", shot="new")
    expect(browser.find("[name='date']").get_attribute("value") == today.isoformat(), "the new session is not for today")
    # The script keeps one blank row of the server's four (the first row is a run to start from),
    # adds rows numbered after the others, and removes them.
    expect(len(browser.find_all("#steps li")) == 2, f"{len(browser.find_all('#steps li'))} step rows with the script")
    for _ in range(2):
        browser.find("#add-step").click()
    expect(len(browser.find_all("#steps li")) == 4 and browser.find_all("[name='step4_type']"), "'Add a step' added no numbered row")
    browser.find_all("#steps li")[-1].find_element("css selector", "button.remove").click()
    expect(len(browser.find_all("#steps li")) == 3 and not browser.find_all("[name='step4_type']"), "'Remove' left the row")

    fill_session(browser, "Track intervals", [
        {"type": "repeat", "times": "6", "block": "2"},
        {"type": "run", "amount": "400 m", "target": "pace", "value": "3:10-3:30"},
        {"type": "recover", "amount": "200 m"},
    ])
    browser.shot("form-filled")
    browser.click("#save", shot="created")
    expect(browser.url.startswith(cloud.url + "/plan?month="), f"saving went to {browser.url}")
    expect("Track intervals" in browser.text("#today"), f"today's cell shows {browser.text('#today')!r}")
    first = browser.find_all("#upcoming li")[0].text
    expect("Track intervals" in first and "6 × (Run 400 m at 3:10–3:30 /km, Recover 200 m)" in first and "today" in first,
           f"the upcoming list starts with {first!r}")
    fits_phone(browser, "the plan page")
    no_console_errors(browser, "the plan page")

    sessions = planned_sessions(cloud, token)
    expect([s["date"] for s in sessions] == [today.isoformat()] and sessions[0]["name"] == "Track intervals"
           and sessions[0]["steps"] == [{"type": "repeat", "times": 6, "steps": [
               {"type": "run", "distance_m": 400, "pace_s_per_km": [190, 210]}, {"type": "recover", "distance_m": 200}]}],
           f"the device gets {sessions}")

    # Edit: 8 rounds, a new name.
    browser.click("#today a.s", shot="edit")
    expect(browser.find("[name='step2_value']").get_attribute("value") == "3:10-3:30", "the edit form lost the pace")
    fits_phone(browser, "the session form")
    no_console_errors(browser, "the session form")
    browser.fill({"name": "Track intervals, 8 rounds", "step1_times": "8"}, form="#session-form")
    browser.click("#save")
    expect("Track intervals, 8 rounds" in browser.text("#upcoming") and "8 × (" in browser.text("#upcoming"),
           f"after the edit: {browser.text('#upcoming')!r}")

    # Done: ticked on the calendar and the list, and no longer sent to the device.
    browser.click("#upcoming li form.mark button", shot="done")
    expect("✓ Done" in browser.find_all("#upcoming li")[0].text and "done" in browser.find("#today a.s").get_attribute("class"),
           f"after marking done: {browser.text('#upcoming')!r}")
    expect(planned_sessions(cloud, token) == [], "a done session is still sent to the device")
    fits_phone(browser, "the plan page, done")
    browser.shot("plan", viewport=PHONE)
    browser.shot("plan", viewport=DESKTOP)
