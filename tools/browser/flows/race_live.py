"""Races with live spectators (issue 34): an organiser makes a race on the web, two runners enrol
on its page, the organiser marks them present; a spectator with no account opens the race's
page (its share link) and, as the runners' devices post their positions, sees a numbered marker
per runner move on the map and the leaderboard reorder when one overtakes the other."""

import datetime as dt
import time

from browser.chromium import DESKTOP
from browser.flows.monitor_dashboard import PASSWORD, log_in, submit
from browser.flows.one_app import shots
from browser.flows.run_page import check_fits_phone, severe
from browser.runner import expect, flow

ORGANISER, RUNNERS = "olga@example.org", ["ann@example.org", "bob@example.org"]
# A 2 km course northwards from Milan's Darsena; the first leg bends east at a stage.
WAYPOINTS = "45.4520, 9.1760\n45.4610, 9.1760\n45.4610, 9.1880"


def iso(moment):
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def post_positions(cloud, token, race, progress, now):
    """One position of a runner `progress` metres along the course (on its first leg, northwards)."""
    lat = 45.4520 + progress / 111_130
    body = {"positions": [{"time": iso(now), "lat": lat, "lon": 9.1760, "progress_m": progress}]}
    status, answer = cloud.request("POST", f"/v1/races/{race}/positions", body, token=token)
    expect(status == 200, f"posting a position answered {status}: {answer}")


def board(browser):
    """The leaderboard's bibs, top first."""
    return browser.run("return Array.from(document.querySelectorAll('#board tbody tr')).map(function (r) { return r.children[1].textContent; })")


def marker_places(browser):
    """Each numbered marker's position on the map, by its bib."""
    return browser.run("""var out = {}; document.querySelectorAll('.race-marker').forEach(function (m) {
        var r = m.getBoundingClientRect(); out[m.textContent] = [Math.round(r.left), Math.round(r.top)]; }); return out;""")


@flow("race-live", tiles=True)
def race_live(t):
    browser, cloud = t.browser, t.cloud
    for address in [ORGANISER] + RUNNERS:
        cloud.add_account(address, PASSWORD)
    tokens = []
    for index, address in enumerate(RUNNERS):
        name = f"runner-{index}"
        tokens.append(cloud.add_device(name))
        cloud.cli("device", "assign", name, address)

    # The organiser makes the race: it starts in a few minutes, so positions from now are taken.
    log_in(browser, cloud, ORGANISER)
    browser.open(cloud.url + "/races/new")
    starts = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M")
    browser.fill({"name": "Darsena 2k", "waypoints": WAYPOINTS}, form="#race-form")
    browser.run("document.querySelector(\"#race-form input[name='starts']\").value = arguments[0]", starts)
    check_fits_phone(browser, "the new-race form")
    shots(browser, "race-new")
    submit(browser, "#race-form")
    expect("/manage" in browser.url, f"making the race went to {browser.url}: {browser.text()[:400]!r}")
    race = browser.url.split("/races/")[1].split("/")[0]

    for address in RUNNERS:
        log_in(browser, cloud, address)
        browser.open(f"{cloud.url}/races/{race}")
        submit(browser, "#enrol")
        expect("You run with bib" in browser.text(), f"{address} enrolled and sees {browser.text()[:300]!r}")

    log_in(browser, cloud, ORGANISER)
    for bib in ("1", "2"):
        browser.open(f"{cloud.url}/races/{race}/manage")
        browser.fill({"status": "present"}, form=f"#runner-{bib} form")
        submit(browser, f"#runner-{bib} form")
    shots(browser, "race-manage")

    # A spectator without an account: the race's page is its share link.
    browser.driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    browser.use(DESKTOP)
    browser.open(f"{cloud.url}/races/{race}")
    expect("Darsena 2k" in browser.text(), f"the spectator sees {browser.text()[:300]!r}")
    expect(browser.wait(lambda: browser.find("#live").text == "live", timeout=15), "the live stream never opened")

    now = dt.datetime.now(dt.timezone.utc)
    post_positions(cloud, tokens[0], race, 300, now)
    post_positions(cloud, tokens[1], race, 200, now)
    # Placed (a distance in the row), not merely listed by bib as before anyone started.
    expect(browser.wait(lambda: board(browser) == ["1", "2"] and "0.30 km" in browser.text("#board"), timeout=15),
           f"the board shows {board(browser)}: {browser.text('#board')!r} after Ann leads")
    expect(browser.wait(lambda: len(marker_places(browser)) == 2, timeout=10), f"the map has markers {marker_places(browser)}")
    before = marker_places(browser)
    browser.shot("race-live-ann-leads")

    # Bob overtakes: his marker moves north, and the board reorders without a reload.
    time.sleep(1)
    post_positions(cloud, tokens[1], race, 450, now + dt.timedelta(seconds=5))
    expect(browser.wait(lambda: board(browser) == ["2", "1"], timeout=15), f"the board shows {board(browser)} after Bob overtakes")
    expect(browser.wait(lambda: marker_places(browser).get("2") != before.get("2"), timeout=10), "Bob's marker did not move")
    after = marker_places(browser)
    expect(after["2"][1] < before["2"][1], f"Bob's marker moved from {before['2']} to {after['2']}, not north (up)")
    expect(after["1"] == before["1"], f"Ann's marker moved from {before['1']} to {after['1']} without a new position")
    rows = browser.run("return Array.from(document.querySelectorAll('#board tbody tr')).map(function (r) { return r.textContent; })")
    expect("Last fix" in browser.text() and any("s ago" in row for row in rows), f"the board's rows are {rows}")
    expect(not severe(browser.console()), f"the race page logged: {severe(browser.console())}")
    shots(browser, "race-live")
