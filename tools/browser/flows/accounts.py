"""An account's life in the browser: sign up, confirm through the e-mailed link, log in, the
account page, log out, reset the password by e-mail, delete the account."""

from browser.chromium import DESKTOP, PHONE
from browser.runner import expect, flow

EMAIL = "anna@example.org"
PASSWORD = "a long pass phrase"
NEW_PASSWORD = "another long pass phrase"


def sign_in(t, password, shot=None):
    t.browser.open(t.cloud.url + "/login")
    t.browser.fill({"email": EMAIL, "password": password})
    t.browser.submit(shot=shot)


def no_sideways_scroll(browser, page):
    document_width, viewport_width = browser.overflow()
    expect(viewport_width == PHONE.width, f"{page}: the layout viewport is {viewport_width} px wide on a {PHONE.width} px phone")
    expect(document_width <= viewport_width, f"{page}: {document_width} px wide on a {viewport_width} px phone")


@flow("accounts", mail=True)
def accounts(t):
    browser, cloud = t.browser, t.cloud
    browser.open(cloud.url + "/signup", shot="sign-up")
    no_sideways_scroll(browser, "sign-up")
    # A common password is refused by name, and nothing else the form said is lost.
    browser.fill({"email": EMAIL, "display_name": "Anna", "timezone": "Europe/Rome", "password": "password1234"})
    browser.submit(shot="weak-password")
    expect(browser.status() == 400 and "password" in browser.text(".error"), f"a common password: {browser.text()}")
    expect(browser.find("[name='display_name']").get_attribute("value") == "Anna", "the form forgot the name")
    browser.fill({"email": EMAIL, "display_name": "Anna", "timezone": "Europe/Rome", "password": PASSWORD})
    browser.submit(shot="check-your-mail")
    expect(browser.text("h1") == "Check your e-mail", f"after sign-up: {browser.text()}")

    # Not confirmed yet: log-in says so.
    sign_in(t, PASSWORD)
    expect(browser.status() == 403 and "confirm" in browser.text(".error"), f"unconfirmed log-in: {browser.text()}")

    confirm = t.mail.link(t.mail.wait_for(EMAIL, subject="Confirm"), cloud.url + "/confirm?token=")
    browser.open(confirm, shot="confirm")
    browser.submit(shot="confirmed")
    expect(browser.text("h1") == "Address confirmed", f"confirming: {browser.text()}")
    # The link works once.
    browser.open(confirm)
    browser.submit()
    expect(browser.status() == 400 and "not valid" in browser.text(), f"a used confirmation link: {browser.text()}")

    sign_in(t, PASSWORD, shot="account")
    expect(browser.url == cloud.url + "/account", f"log-in went to {browser.url}")
    body = browser.text()
    for shown in ("Anna", EMAIL, "Europe/Rome"):
        expect(shown in body, f"the account page does not show {shown!r}:\n{body}")
    no_sideways_scroll(browser, "account")
    browser.shot("account", viewport=DESKTOP)
    cookies = {c["name"]: c for c in browser.driver.get_cookies()}
    session = cookies.get("pacer_session")
    expect(session is not None, f"no session cookie: {sorted(cookies)}")
    expect(session["httpOnly"] and session.get("sameSite") == "Lax", f"the session cookie is {session}")
    expect(not browser.run("return document.cookie.includes('pacer_session')"), "scripts can read the session cookie")

    browser.submit(form="form[action='/logout']", shot="logged-out")
    browser.open(cloud.url + "/account")
    expect(browser.status() == 401, f"/account after log-out answered {browser.status()}")

    # Reset by e-mail: the old password stops working, the new one works.
    browser.open(cloud.url + "/reset")
    browser.fill({"email": EMAIL})
    browser.submit()
    reset = t.mail.link(t.mail.wait_for(EMAIL, subject="Reset"), cloud.url + "/reset/password?token=")
    browser.open(reset, shot="new-password")
    browser.fill({"password": NEW_PASSWORD})
    browser.submit(shot="password-changed")
    expect(browser.text("h1") == "Password changed", f"resetting: {browser.text()}")
    sign_in(t, PASSWORD)
    expect(browser.status() == 401, f"the old password still logs in ({browser.status()})")
    sign_in(t, NEW_PASSWORD)
    expect(browser.url == cloud.url + "/account", f"the new password does not log in: {browser.text()}")

    # Deleting asks for the password; a wrong one deletes nothing.
    browser.open(cloud.url + "/account/delete", shot="delete")
    browser.fill({"password": PASSWORD})
    browser.submit()
    expect(browser.status() == 401 and "nothing was deleted" in browser.text(), f"a wrong password: {browser.text()}")
    browser.fill({"password": NEW_PASSWORD})
    browser.submit(shot="deleted")
    expect(browser.text("h1") == "Account deleted", f"deleting: {browser.text()}")
    sign_in(t, NEW_PASSWORD)
    expect(browser.status() == 401, f"a deleted account still logs in ({browser.status()})")
    expect("Anna" not in cloud.cli("user", "list"), "pacer-cloud user list still lists the account")
