"""The harness's own form and link helpers (fill, submit, click), which sign-up and log-in flows
stand on, against the flow's pacer-cloud: a form and a link on a page of their own."""

from urllib.parse import parse_qs, quote, urlsplit

from browser.runner import expect, flow


@flow("harness-forms")
def harness_forms(t):
    browser, target = t.browser, t.cloud.url + "/health"
    browser.open("data:text/html," + quote(
        f"<meta name=viewport content='width=device-width'><form method=get action='{target}'><input name=email type=email><input name=password type=password>"
        f"<button type=submit>Go</button></form><a id=next href='{target}?by=link'>next</a>"))
    browser.fill({"email": "runner@example.org", "password": "correct horse battery"})
    browser.submit(shot="submitted")
    sent = parse_qs(urlsplit(browser.url).query)
    expect(browser.url.startswith(target) and sent == {"email": ["runner@example.org"], "password": ["correct horse battery"]},
           f"the form went to {browser.url}")
    browser.driver.back()
    browser.click("#next")
    expect(browser.url == target + "?by=link", f"the link went to {browser.url}")
