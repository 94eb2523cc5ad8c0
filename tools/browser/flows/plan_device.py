"""The plan reaches the wearable (issue #21): a session planned for today on the web (800 m warm-up,
then 3 x (400 m at 3:10-3:30 /km, 200 m recover): 2.6 km, most of which the replayed run of
about 3 km covers, as a session needs to be marked done) is fetched by pacerd through the sync channel,
`pacerctl plan` lists it, `pacerctl run start --planned` speaks its first step, and once the run
is uploaded the session is marked done on the plan page, the run's page says which session it
followed, and the device is no longer sent it."""

import time

from browser.runner import expect, flow

from .plan import fill_session, planned_sessions, signed_in_runner

EMAIL, PASSWORD = "planned.runner@example.org", "a pass phrase for the planned runner"
NAME = "Intervals before work"


@flow("plan-device")
def plan_device(t):
    browser, cloud = t.browser, t.cloud
    token, today = signed_in_runner(t, EMAIL, PASSWORD, "planned-pacer")

    browser.open(cloud.url + "/plan/new?date=" + today.isoformat())
    for _ in range(2):
        browser.find("#add-step").click()
    fill_session(browser, NAME, [
        {"type": "warmup", "amount": "800 m"},
        {"type": "repeat", "times": "3", "block": "2"},
        {"type": "run", "amount": "400 m", "target": "pace", "value": "3:10-3:30"},
        {"type": "recover", "amount": "200 m"},
    ])
    browser.click("#save", shot="planned")
    expect(NAME in browser.text("#today"), f"today's cell shows {browser.text('#today')!r}")
    sessions = planned_sessions(cloud, token)
    expect(len(sessions) == 1 and sessions[0]["name"] == NAME, f"the device would get {sessions}")

    # The wearable, with the device's token: its sync thread fetches the plan.
    device = t.device(upload={"url": cloud.url, "token": token, "allow_http": True})
    device.ctl("sync")
    listed = device.ctl("plan")
    expect(NAME in listed and today.isoformat() in listed, f"pacerctl plan lists:\n{listed}")
    readiness = device.ctl("readiness", check=False)
    expect(f"Today: {NAME}" in readiness, f"the readiness does not name today's session:\n{readiness}")

    device.ctl("run", "start", "--planned")
    # The first step is spoken once the run has its first fix.
    device.gpsfake.release()
    said = device.wait_said("Warm-up: 800 metres", timeout=60)
    expect(said[0][1].startswith("Warm-up: 800 metres"), f"the first step was spoken as {said}")
    device.wait_run_end()
    device.ctl("run", "stop")
    shown = device.ctl("runs", "show", "1")
    expect(NAME in shown, f"pacerctl runs show 1 does not name the workout:\n{shown}")

    # The upload names the session: the cloud marks it done, and stops sending it.
    deadline = time.monotonic() + 60
    while planned_sessions(cloud, token):
        expect(time.monotonic() < deadline, "the uploaded run did not mark the session done within 60 s")
        time.sleep(0.2)
    browser.open(cloud.url + "/plan", shot="done")
    expect("done" in browser.find("#today a.s").get_attribute("class"), f"today's session is not done: {browser.text('#today')!r}")
    browser.open(cloud.url + "/runs")
    browser.click("ul.runs a[href^='/runs/']", shot="run")
    expect(f"Followed: {NAME}" in browser.text(), f"the run's page does not say which session it followed: {browser.text()[:400]}")
