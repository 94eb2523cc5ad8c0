"""What a flow talks to besides the browser: pacer-cloud on a free port with a fresh SQLite database,
its CLI on that database, its JSON API, and tools/smtp-sink for the mail it sends (each its own
process group, stopped by PID with pacertools.processes.end_group); and another site's pages."""

import email
import email.policy
import http.server
import json
import os
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request

from pacertools.common import ROOT, read_text
from pacertools.ports import free_port
from pacertools.processes import end_group, wait_listening


class MailSink:
    """tools/smtp-sink on a free port of 127.0.0.1; the messages pacer-cloud sent to it."""

    def __init__(self, directory):
        self.log = os.path.join(directory, "smtp-sink.jsonl")
        out, err = os.path.join(directory, "smtp-sink.out"), os.path.join(directory, "smtp-sink.err")
        with open(out, "wb") as stdout, open(err, "wb") as stderr:
            self.process = subprocess.Popen([os.path.join(ROOT, "tools", "smtp-sink"), "--log", self.log],
                                            stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL,
                                            start_new_session=True)
        try:
            # 30 s: Python starting in the test run's start burst took over 10 (run 21).
            self.port = wait_listening(self.process, out, err, "tools/smtp-sink", timeout=30)
        except BaseException:
            end_group(self.process)
            raise

    def messages(self):
        """Every message accepted so far, parsed (email.message.EmailMessage), oldest first."""
        parsed = []
        for line in read_text(self.log).splitlines():
            entry = json.loads(line) if line.strip() else {}
            if "data" in entry:
                parsed.append(email.message_from_string(entry["data"], policy=email.policy.default))
        return parsed

    def wait_for(self, to, subject=None, timeout=20.0):
        """The first message to address `to` (whose Subject contains `subject`, when given);
        pacer-cloud's outbox sends in the background, so this polls."""
        deadline = time.monotonic() + timeout
        while True:
            for message in self.messages():
                if to in str(message["To"]) and (subject is None or subject in str(message["Subject"])):
                    return message
            if time.monotonic() > deadline:
                seen = [f"{m['To']}: {m['Subject']}" for m in self.messages()]
                raise AssertionError(f"no mail to {to}{f' about {subject!r}' if subject else ''} within {timeout:.0f} s "
                                     f"(the sink has {seen or 'none'})")
            time.sleep(0.1)

    @staticmethod
    def link(message, prefix):
        """The first URL in the message's text that starts with `prefix`."""
        text = message.get_body(preferencelist=("plain",)).get_content()
        for url in re.findall(r"https?://[^\s<>\"]+", text):
            if url.startswith(prefix):
                return url
        raise AssertionError(f"no link starting with {prefix} in the mail {message['Subject']!r}:\n{text}")

    def stop(self):
        end_group(self.process)


class Cloud:
    """`pacer-cloud serve` on a free port of 127.0.0.1 with a fresh SQLite database in `directory`,
    mailing through `mail` (a MailSink) when given."""

    def __init__(self, binary, directory, mail=None, extra=()):
        self.binary = binary
        self.database = "sqlite:" + os.path.join(directory, "cloud.db")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(directory, "pacer-cloud.log")
        command = [binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--database", self.database,
                   "--public-url", self.url]
        if mail is not None:
            command += ["--smtp", f"127.0.0.1:{mail.port}"]
        command += list(extra)
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            start_new_session=True)
        try:
            self._wait_healthy()
        except BaseException:
            # Not yet the caller's to stop (an interruption while it starts included).
            end_group(self.process)
            raise

    def _wait_healthy(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"pacer-cloud exited ({self.process.returncode}): {self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"pacer-cloud did not answer {self.url}/health within {timeout:.0f} s: {self.log_tail()}")

    def cli(self, *arguments):
        """`pacer-cloud ARGUMENTS --database` this server's database; its stdout. Raises with its
        stderr when it fails."""
        run = subprocess.run([self.binary, *arguments, "--database", self.database], capture_output=True, text=True,
                             timeout=60)
        if run.returncode != 0:
            raise AssertionError(f"pacer-cloud {' '.join(arguments)} exited {run.returncode}: {run.stderr.strip()}")
        return run.stdout

    def add_account(self, email_address, password, timezone="UTC"):
        """`pacer-cloud user add ADDRESS --confirmed`, the password on standard input."""
        run = subprocess.run([self.binary, "user", "add", email_address, "--confirmed", "--timezone", timezone,
                              "--database", self.database], input=password + "\n", capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            raise AssertionError(f"pacer-cloud user add exited {run.returncode}: {run.stderr.strip()}")

    def add_device(self, name, email_address=None):
        """`pacer-cloud device add NAME [--email ADDRESS]`; the device's bearer token."""
        extra = ["--email", email_address] if email_address else []
        return self.cli("device", "add", name, *extra).split("\n")[0]

    def request(self, method, path, body=None, token=None):
        """(status, parsed JSON or None) of one API request; 4xx and 5xx are answers, not errors."""
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=15) as answer:
                status, text = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read()
        try:
            return status, json.loads(text) if text else None
        except ValueError:
            return status, None

    def headers(self, path):
        """(status, headers) of a GET, as a client without a browser sees them."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=15) as answer:
                return answer.status, answer.headers
        except urllib.error.HTTPError as error:
            return error.code, error.headers

    def log_tail(self, lines=15):
        return "\n".join(read_text(self.log_path).splitlines()[-lines:])

    def stop(self):
        end_group(self.process)


class LoopbackSite:
    """A threaded HTTP server on a free port of 127.0.0.1 answering with `handler` (a
    BaseHTTPRequestHandler whose own logging is silenced), until stop()."""

    def __init__(self, handler):
        class Quiet(handler):
            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class OtherSite(LoopbackSite):
    """Pages of another site than pacer-cloud's, for attacks a browser makes on a user's behalf
    (framing, cross-site forms): served from a thread on 127.0.0.1 but named http://localhost:PORT,
    so that to the browser it is another origin and another site, yet a loopback one (Chromium
    blocks a public page, data: URLs included, from loading loopback URLs at all)."""

    def __init__(self, pages):
        served = dict(pages)

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/favicon.ico":
                    # Chromium asks for it; a 404 would be an error in the console the flows read.
                    self.send_response(204)
                    self.end_headers()
                    return
                body = served.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write((body or "not here").encode())

        super().__init__(Handler)
        self.url = f"http://localhost:{self.port}"


def _tile_png():
    """A 256 x 256 PNG of one light grey: what a map tile is, without the internet."""
    import struct
    import zlib

    def part(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + b"\xdd\xe4\xd8" * 256 for _ in range(256))
    return (b"\x89PNG\r\n\x1a\n" + part(b"IHDR", struct.pack(">IIBBBBB", 256, 256, 8, 2, 0, 0, 0))
            + part(b"IDAT", zlib.compress(rows)) + part(b"IEND", b""))


class TileStub(LoopbackSite):
    """A tile server on 127.0.0.1 (`template`: its {z}/{x}/{y} URL) serving one plain tile, and
    counting what it served: maps in tests never reach OpenStreetMap."""

    def __init__(self):
        tile = _tile_png()
        served = self.served = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                parts = self.path.split("/")
                if len(parts) == 4 and parts[3].endswith(".png") and all(p.isdigit() for p in (parts[1], parts[2], parts[3][:-4])):
                    served.append(self.path)
                    self.send_response(200)
                    self.send_header("Content-Type", "image/png")
                    self.send_header("Content-Length", str(len(tile)))
                    self.end_headers()
                    self.wfile.write(tile)
                else:
                    self.send_response(404)
                    self.end_headers()

        super().__init__(Handler)
        self.template = f"http://127.0.0.1:{self.port}/{{z}}/{{x}}/{{y}}.png"
