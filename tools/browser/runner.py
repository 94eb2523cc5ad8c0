"""Flows and how tools/browser-test runs them: each once, in the one shared browser, each against
its own pacer-cloud (and tools/smtp-sink when it sends mail) that is stopped when it ends.

A flow is a function in a module of tools/browser/flows, registered with @flow. A sign-up flow,
once those pages exist, would read (the paths are the pages', whatever they will be):

    from browser.runner import expect, flow

    @flow("sign-up", mail=True)
    def sign_up(t):             # t: a FlowContext
        t.browser.open(t.cloud.url + "/signup", shot="sign-up")
        t.browser.fill({"email": "runner@example.org", "password": "a long pass phrase"})
        t.browser.submit(shot="check-your-mail")
        t.browser.open(t.mail.link(t.mail.wait_for("runner@example.org"), t.cloud.url + "/confirm/"), shot="confirmed")
        t.browser.fill({"email": "runner@example.org", "password": "a long pass phrase"}, form="#login")
        t.browser.submit(form="#login", shot="signed-in")
        expect("runner@example.org" in t.browser.text(), f"not signed in: {t.browser.text()}")

Checks are expect(condition, message); a failure names the page, its screenshot and the line.
"""

import os
import time
import traceback

from pacertools.common import Interrupted, log, run_cleanups

from .device import Device
from .servers import Cloud, MailSink, OtherSite, TileStub

FLOWS = []


class Flow:
    def __init__(self, name, function, mail, tiles):
        self.name, self.function, self.mail, self.tiles = name, function, mail, tiles


def flow(name, mail=False, tiles=False):
    """Registers a flow; `mail`: it gets a MailSink and a pacer-cloud that sends through it;
    `tiles`: a TileStub that its pacer-cloud's maps load their tiles from."""
    def register(function):
        FLOWS.append(Flow(name, function, mail, tiles))
        return function
    return register


def expect(condition, message):
    """A check of a flow (plain assert vanishes under python -O)."""
    if not condition:
        raise AssertionError(message)


class FlowContext:
    """What a flow works with: the shared browser, its pacer-cloud, its mail sink and tile stub
    (or None), a directory of its own, and other sites it starts."""

    def __init__(self, browser, cloud, mail, directory, cleanups, tiles=None):
        self.browser, self.cloud, self.mail, self.directory, self.tiles = browser, cloud, mail, directory, tiles
        self._cleanups = cleanups

    def device(self, upload=None, zones=(), cycle=0.004):
        """A started pacerd (browser.device.Device, built next to pacer-cloud) with `upload` as
        its [upload] keys and `zones` as its privacy zones, stopped when the flow ends."""
        device = Device(os.path.dirname(self.cloud.binary), os.path.join(self.directory, "device"), upload, zones, cycle)
        self._cleanups.append(device.stop)
        device.start()
        return device

    def other_site(self, pages):
        """Another site serving `pages` ({"/path": html}) until the flow ends (servers.OtherSite)."""
        site = OtherSite(pages)
        self._cleanups.append(site.stop)
        return site


class FlowResult:
    def __init__(self, name, seconds, failure=None):
        self.name, self.seconds, self.failure = name, seconds, failure


def run_flow(entry, browser, binary, workdir):
    directory = os.path.join(workdir, entry.name)
    os.makedirs(directory)
    started = time.monotonic()
    cleanups = []
    cloud = None
    try:
        browser.reset(prefix=entry.name + "-")
        mail = None
        if entry.mail:
            mail = MailSink(directory)
            cleanups.append(mail.stop)
        tiles = None
        if entry.tiles:
            tiles = TileStub()
            cleanups.append(tiles.stop)
        cloud = Cloud(binary, directory, mail, extra=["--tile-url", tiles.template] if tiles else [])
        cleanups.append(cloud.stop)
        entry.function(FlowContext(browser, cloud, mail, directory, cleanups, tiles))
        return FlowResult(entry.name, time.monotonic() - started)
    except Interrupted:
        raise
    except Exception as error:  # noqa: BLE001 - every failure of a flow is reported the same way
        return FlowResult(entry.name, time.monotonic() - started, describe_failure(entry, error, browser, cloud))
    finally:
        # The alert page reloads itself: leave it before its server goes.
        try:
            browser.driver.get("about:blank")
        except Exception:  # noqa: BLE001 - a dead browser is reported by the next flow
            pass
        run_cleanups(cleanups)


def shown_path(path):
    """`path` relative to the working directory when it is below it, else absolute."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def describe_failure(entry, error, browser, cloud):
    """What a reader needs to see why a flow failed: the check, the page's URL, a screenshot of
    it, where in the flow, and the end of pacer-cloud's log."""
    lines = [f"{type(error).__name__}: {error}" if not isinstance(error, AssertionError) else str(error)]
    try:
        lines.append(f"page: {browser.url}")
        lines.append(f"screenshot: {shown_path(browser.shot('FAILED'))}")
    except Exception as shot_error:  # noqa: BLE001 - the browser itself may be what failed
        lines.append(f"(no screenshot: {shot_error})")
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "/flows/" in f.filename]
    if frames:
        lines.append(f"at: {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}: {frames[-1].line}")
    if cloud is not None:
        lines.append("pacer-cloud's log ends:\n    " + cloud.log_tail().replace("\n", "\n    "))
    return "\n  ".join(lines)


def prepare_shots(shots, chosen=None, every=None):
    """The screenshots directory without the shots of the flows about to run (`chosen`, of
    `every` flow; all when None): what is in it after a run is that run's. Other flows' shots
    stay, so that runs of different flows side by side keep each other's. A shot is named
    FLOW-SHOT-DEVICE.png, and belongs to the longest flow name it starts with (run-page-no-tiles,
    not run-page)."""
    os.makedirs(shots, exist_ok=True)
    names = sorted((f.name for f in every or []), key=len, reverse=True)
    mine = None if chosen is None else {f.name for f in chosen}
    for name in os.listdir(shots):
        if not name.endswith(".png"):
            continue
        owner = next((flow for flow in names if name.startswith(flow + "-")), None)
        if mine is None or owner in mine:
            os.remove(os.path.join(shots, name))


def run_all(flows, browser_factory, binary, workdir):
    """Starts the one browser, runs each flow once, quits it; [FlowResult] and the seconds the
    browser took to start."""
    started = time.monotonic()
    browser = browser_factory()
    startup = time.monotonic() - started
    results = []
    try:
        for entry in flows:
            result = run_flow(entry, browser, binary, workdir)
            log(f"{entry.name}: {'ok' if result.failure is None else 'FAILED'} in {result.seconds:.1f} s")
            results.append(result)
    finally:
        browser.quit()
    return results, startup
