"""A monitor's side of pacer-cloud's monitoring over plain HTTP, Python stdlib only: an account
logs in through the login form, the runner invites and the monitor accepts through the e-mailed
link, and the monitor answers an open alert or asks "where are you?" through the dashboard's
forms, CSRF token and all, as a browser does. Used by tools/demo, tools/bench-answer and
pacerd's answer tests (Tests/PacerDaemonTests/AnswerChannelTests.swift).

    monitor.py URL EMAIL PASSWORD answer [on_my_way | text TEXT]   the first open alert on /watch
    monitor.py URL EMAIL PASSWORD where                            the first runner's device on /watch
    monitor.py URL RUNNER_EMAIL PASSWORD consent MONITOR_EMAIL SMTP_LOG
                                                                   invite (mail read from tools/smtp-sink's log), accept

Prints the HTTP status of the last request; exits 0 when it was the expected 303.
"""

import html
import http.cookiejar
import json
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *_args, **_kwargs):
        return None


class WebSession:
    """One browser's cookies on pacer-cloud at `base` ("http://127.0.0.1:PORT")."""

    def __init__(self, base):
        self.base = base.rstrip("/")
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), _NoRedirect)

    def request(self, path, fields=None):
        """(status, text) of a GET, or of a form POST when `fields` is given; redirects are not followed."""
        data = urllib.parse.urlencode(fields).encode() if fields is not None else None
        try:
            with self.opener.open(self.base + path, data, timeout=30) as response:
                return response.status, response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode("utf-8", "replace")

    def csrf(self, page):
        status, text = self.request(page)
        found = re.search(r'name="csrf" value="([^"]+)"', text)
        if not found:
            raise RuntimeError(f"GET {page} answered {status} without a form's csrf field")
        return found.group(1)

    def post(self, path, fields, form_page):
        return self.request(path, dict(fields, csrf=self.csrf(form_page)))[0]

    def log_in(self, email, password):
        status = self.post("/login", {"email": email, "password": password}, "/login")
        if status != 303:
            raise RuntimeError(f"logging in as {email} answered {status}")

    def open_alerts(self):
        """[(device id, alert id)] of the open alerts on the dashboard, in its order."""
        _, text = self.request("/watch")
        found, device = [], None
        for match in re.finditer(r'id="card-([^"]+)"|class="alert open" data-alert="([^"]+)"', text):
            if match.group(1):
                device = match.group(1)
            elif device:
                found.append((device, match.group(2)))
        return found

    def devices(self):
        _, text = self.request("/watch")
        return re.findall(r'id="card-([^"]+)"', text)

    def answer(self, device, alert, kind="on_my_way", text=None):
        fields = {"kind": kind} if text is None else {"kind": kind, "text": text}
        return self.post(f"/watch/alerts/{device}/{alert}/answer", fields, "/watch")

    def ask_where(self, device):
        return self.post(f"/watch/devices/{device}/where", {"kind": "where_are_you"}, "/watch")


def wait_for_mail(smtp_log, to, timeout=30.0):
    """The text of the first message tools/smtp-sink logged for `to`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(smtp_log, encoding="utf-8") as log:
                for line in log:
                    entry = json.loads(line) if line.strip() else {}
                    if "data" in entry and any(to in rcpt for rcpt in entry.get("rcpt_to", [])):
                        return entry["data"].replace("=\r\n", "").replace("=\n", "").replace("=3D", "=")
        except FileNotFoundError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"no mail to {to} within {timeout:.0f} s in {smtp_log}")


def consent(base, runner_email, monitor_email, password, smtp_log):
    """The runner invites `monitor_email`; the monitor accepts through the mailed link. Returns
    the monitor's signed-in session."""
    runner = WebSession(base)
    runner.log_in(runner_email, password)
    status = runner.post("/monitoring/invite", {"email": monitor_email}, "/monitoring")
    if status != 200:
        raise RuntimeError(f"the invitation answered {status}")
    mail = wait_for_mail(smtp_log, monitor_email)
    token = re.search(r"/monitoring/accept\?token=([A-Za-z0-9_\-]+)", mail)
    if not token:
        raise RuntimeError(f"no invitation link in the mail:\n{mail}")
    monitor = WebSession(base)
    monitor.log_in(monitor_email, password)
    page = f"/monitoring/accept?token={token.group(1)}"
    status = monitor.post("/monitoring/accept", {"token": html.unescape(token.group(1))}, page)
    if status != 303:
        raise RuntimeError(f"accepting answered {status}")
    return monitor


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 64
    base, email, password, command, rest = argv[1], argv[2], argv[3], argv[4], argv[5:]
    if command == "consent":
        consent(base, email, rest[0], password, rest[1])
        print(303)
        return 0
    session = WebSession(base)
    session.log_in(email, password)
    if command == "answer":
        alerts = session.open_alerts()
        if not alerts:
            print("no open alert on the dashboard", file=sys.stderr)
            return 1
        device, alert = alerts[0]
        status = session.answer(device, alert, *(rest[:1] or ["on_my_way"]), *(rest[1:2]))
    elif command == "where":
        devices = session.devices()
        if not devices:
            print("no runner's device on the dashboard", file=sys.stderr)
            return 1
        status = session.ask_where(devices[0])
    else:
        print(__doc__, file=sys.stderr)
        return 64
    print(status)
    return 0 if status == 303 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
