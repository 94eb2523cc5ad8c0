"""Units in miles (issue 33): a runner chooses miles on the account page; the run page's summary,
splits, map marks and chart axes, the runs list, the statistics with their weekly and monthly
volume charts, the calendar, the shoes and the plan form then read miles. Screenshots of the pages
new in #33 (calendar, shoes, a run's settings, the plan form, statistics), phone and desktop, light
and dark."""

import datetime as dt

from selenium.webdriver.support.ui import Select

from browser.flows.one_app import shots
from browser.flows.run_page import EMAIL, PASSWORD, check_fits_phone, drawn_pixels, log_in, severe, wait_complete
from browser.runner import expect, flow
from pacertools import runs


@flow("units", tiles=True)
def units(t):
    browser, cloud = t.browser, t.cloud
    cloud.add_account(EMAIL, PASSWORD, timezone="Europe/Rome")
    token = cloud.add_device("demo-wearable")
    cloud.cli("device", "assign", "demo-wearable", EMAIL)
    samples = runs.load(start=dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2))
    run_id = runs.upload(cloud.url, token, samples)
    log_in(browser, cloud)

    browser.open(cloud.url + "/account")
    Select(browser.find("form[action='/account/settings'] select[name='units']")).select_by_value("mi")
    browser.submit("form[action='/account/settings']")
    expect(browser.url == cloud.url + "/account", f"saving the settings went to {browser.url}")
    chosen = Select(browser.find("select[name='units']")).first_selected_option.text
    expect(chosen == "Miles", f"the account page shows {chosen!r} chosen")

    browser.open(f"{cloud.url}/runs/{run_id}")
    wait_complete(browser)
    page = browser.text()
    expect("1.86 mi" in page and "/mi" in page and " km" not in page, f"the run page in miles shows {page[:500]!r}")
    axes = browser.run("var c = window.pacerCharts.pace; return [c.options.scales.x.title.text, c.options.scales.y.title.text]")
    expect(axes == ["mi", "min/mi"], f"the pace chart's axes are titled {axes}")
    marks = browser.run("return document.querySelectorAll('.leaflet-interactive').length")
    expect(marks >= 3, f"the map has {marks} interactive markers (start, finish and a mile mark)")
    pixels = drawn_pixels(browser, "pace-chart", (31, 95, 191))
    expect(pixels > 200, f"the pace chart in miles has {pixels} pixels of its line")
    heads = [th.text for th in browser.find_all("table th")][:1]
    expect(heads == ["mi"], f"the splits table is headed {heads}")
    shots(browser, "run-miles")

    browser.open(cloud.url + "/runs")
    expect("1.86 mi" in browser.text(), f"the runs list shows {browser.text()[:300]!r}")

    browser.open(cloud.url + "/stats")
    expect(browser.wait(lambda: browser.run("return document.body.dataset.complete === '1'"), timeout=15), "the statistics never drew")
    for canvas in ("weeks-chart", "months-chart"):
        bars = drawn_pixels(browser, canvas, (31, 95, 191))
        expect(bars > 50, f"the {canvas} has {bars} pixels of its bars")
    unit = browser.run("return window.pacerCharts.weeks.options.scales.y.title.text")
    expect(unit == "mi", f"the weekly volume is titled {unit!r}")
    check_fits_phone(browser, "the statistics in miles")
    expect(not severe(browser.console()), f"the statistics logged: {severe(browser.console())}")
    shots(browser, "stats-miles")

    browser.open(cloud.url + "/calendar")
    expect("1.9 mi" in browser.text(), f"the calendar shows {browser.text()[:300]!r}")
    check_fits_phone(browser, "the calendar")
    shots(browser, "calendar")

    browser.open(cloud.url + "/shoes")
    browser.fill({"name": "Road shoes", "start_km": "100", "remind_km": "400"}, form="#new-shoe")
    browser.submit("#new-shoe")
    expect("100.00 mi" in browser.text(), f"the shoes page shows {browser.text()[:300]!r}")
    check_fits_phone(browser, "the shoes page")
    shots(browser, "shoes")

    browser.open(f"{cloud.url}/runs/{run_id}/edit")
    check_fits_phone(browser, "a run's settings")
    shots(browser, "run-edit")

    browser.open(cloud.url + "/plan/new")
    options = [o.text for o in browser.find_all("select[name='step1_target'] option")]
    expect("Pace /mi" in options, f"the plan form's targets are {options}")
    check_fits_phone(browser, "the plan form")
    shots(browser, "plan-new")
