"""A runner managing a run (#33): renames it, chooses its sport, writes notes, counts it for a pair of shoes, shares it by a link
that a signed-out visitor opens (map and charts, nothing of the account), ends the link (the
visitor then gets 404), and deletes the run after its confirmation page."""

from selenium.webdriver.support.ui import Select

from browser.chromium import DESKTOP
from browser.flows.run_page import EMAIL, check_drawn, check_fits_phone, demo_run_for, log_in, severe, wait_complete
from browser.runner import expect, flow
from pacertools import runs


@flow("run-manage", tiles=True)
def run_manage(t):
    browser, cloud = t.browser, t.cloud
    run_id = demo_run_for(cloud)
    log_in(browser, cloud)

    browser.open(f"{cloud.url}/runs/{run_id}")
    wait_complete(browser)
    browser.click("#edit-run", shot="edit")
    expect(browser.url == f"{cloud.url}/runs/{run_id}/edit", f"the edit link went to {browser.url}")
    check_fits_phone(browser, "the run's settings")
    browser.shot("edit", viewport=DESKTOP)
    browser.fill({"title": "Park loop with Bea", "notes": "Easy pace.\nWindy on the hill."}, form="#run-form")
    Select(browser.find("#run-form select[name='sport']")).select_by_value("run")
    browser.find("#run-form input[name='visibility'][value='monitors']").click()
    browser.submit("#run-form")
    wait_complete(browser)
    expect(browser.text("h1") == "Park loop with Bea", f"the run page's heading is {browser.text('h1')!r}")
    page = browser.text()
    expect("Windy on the hill." in page and "Me and the people who watch over me" in page, f"the run page shows {page[:400]!r}")
    browser.shot("renamed")

    # A refused name: the message beside the form, what was typed kept.
    browser.open(f"{cloud.url}/runs/{run_id}/edit")
    browser.run("document.querySelector(\"#run-form input[name='title']\").removeAttribute('maxlength')")
    browser.fill({"title": "x" * 101}, form="#run-form")
    browser.submit("#run-form", shot="edit-refused")
    expect(browser.status() == 400 and "up to 100 characters" in browser.text(), f"a 101-character name got {browser.status()}")

    # A share link, shown once.
    browser.open(f"{cloud.url}/runs/{run_id}/edit")
    browser.click("form[action$='/share'] button", shot="share-link")
    link = browser.text("#share-link")
    expect(link.startswith(cloud.url + "/s/"), f"the share link is {link!r}")

    # Opened signed out, as a friend would.
    browser.driver.delete_all_cookies()
    browser.open(link)
    wait_complete(browser)
    expect(browser.status() == 200, f"the share link answered {browser.status()}")
    check_drawn(browser, len(runs.load()))
    shared = browser.text()
    expect("Park loop with Bea" in shared and "3.00 km" in shared, f"the shared page shows {shared[:300]!r}")
    for private in (EMAIL, "demo-wearable", "Account", "Download", "Edit"):
        expect(private not in shared, f"the shared page shows {private!r}")
    check_fits_phone(browser, "the shared run")
    logged = severe(browser.console())
    expect(not logged, f"the shared page logged: {logged}")
    browser.shot("shared")
    browser.shot("shared", viewport=DESKTOP)

    # The runner ends it: the friend's link is 404.
    log_in(browser, cloud)
    browser.open(f"{cloud.url}/runs/{run_id}/edit")
    browser.click("form[action$='/share/end'] button")
    status, _ = cloud.headers(link[len(cloud.url):])
    expect(status == 404, f"an ended share link answered {status}")

    # Shoes: a pair added, chosen for the run, its distance counted.
    browser.open(f"{cloud.url}/shoes", shot="shoes-empty")
    browser.fill({"name": "Blue trainers", "start_km": "120", "remind_km": "122"}, form="#new-shoe")
    browser.submit("#new-shoe")
    browser.open(f"{cloud.url}/runs/{run_id}/edit")
    Select(browser.find("#run-form select[name='shoe']")).select_by_visible_text("Blue trainers")
    browser.submit("#run-form")
    browser.open(f"{cloud.url}/shoes", shot="shoes")
    shoes = browser.text()
    expect("123.00 km" in shoes and "Time to replace them" in shoes, f"the shoes page shows {shoes[:300]!r}")
    check_fits_phone(browser, "the shoes page")
    browser.shot("shoes", viewport=DESKTOP)

    # Deleting: a confirmation first, then the run is gone from the list.
    browser.open(f"{cloud.url}/runs/{run_id}/edit")
    browser.click(f"a[href='/runs/{run_id}/delete']", shot="delete-confirm")
    expect("cannot be undone" in browser.text(), "the confirmation page does not say it cannot be undone")
    browser.click(f"form[action='/runs/{run_id}/delete'] button", shot="deleted")
    expect(browser.url == cloud.url + "/runs", f"deleting went to {browser.url}")
    expect(f"/runs/{run_id}" not in browser.run("return document.body.innerHTML"), "the deleted run is still listed")
    browser.open(f"{cloud.url}/runs/{run_id}")
    expect(browser.status() == 404, f"the deleted run's page answered {browser.status()}")
