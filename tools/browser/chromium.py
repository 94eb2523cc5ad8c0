"""One headless Chromium, driven through Debian's chromedriver with Selenium, that every flow of a
run shares: pages opened at a phone's size, full-page screenshots, the browser console, forms."""

import base64
import os
import time

from pacertools.processes import end_group

CHROMEDRIVER = "/usr/bin/chromedriver"


class Viewport:
    def __init__(self, name, width, height, scale, mobile):
        self.name, self.width, self.height, self.scale, self.mobile = name, width, height, scale, mobile


# A mid-sized phone (CSS pixels, as an iPhone 14 reports them), emulated as mobile so that the
# page's <meta name="viewport"> is honoured the way a phone honours it; and one desktop window.
PHONE = Viewport("phone", 390, 844, 2, True)
DESKTOP = Viewport("desktop", 1280, 800, 1, False)


class Chromium:
    def __init__(self, workdir, shots):
        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
        except ImportError as error:
            raise SystemExit(f"browser-test: {error}: /usr/bin/python3 needs python3-selenium (run tools/setup)")
        if not os.access(CHROMEDRIVER, os.X_OK):
            raise SystemExit(f"browser-test: no {CHROMEDRIVER}: install chromium and chromium-driver (run tools/setup)")
        self.shots = shots
        self.prefix = ""
        self.viewport = None
        options = webdriver.ChromeOptions()
        options.add_argument("--headless=new")
        # Chromium refuses to start as root with its sandbox ("Running as root without
        # --no-sandbox is not supported", crbug.com/638180). The sandbox guards against hostile
        # pages; this browser only ever opens the pacer-cloud a flow started on loopback.
        if os.geteuid() == 0:
            options.add_argument("--no-sandbox")
        options.add_argument(f"--user-data-dir={os.path.join(workdir, 'profile')}")
        options.add_argument("--window-size=1280,800")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # Its own process group, so that what is left of chromedriver and Chromium after quit()
        # is ended by PID (end_group), never by name.
        self.service = Service(CHROMEDRIVER, log_path=os.path.join(workdir, "chromedriver.log"),
                               popen_kw={"start_new_session": True})
        try:
            self.driver = webdriver.Chrome(service=self.service, options=options)
            self.use(PHONE)
        except BaseException:
            # An interruption or a browser that cannot start: chromedriver and what it started go.
            if getattr(self.service, "process", None) is not None:
                end_group(self.service.process)
            raise

    def quit(self):
        try:
            self.driver.quit()
        finally:
            end_group(self.service.process)

    def reset(self, prefix):
        """A clean start for the next flow: no cookies, a blank page, an empty console, the phone."""
        self.driver.get("about:blank")
        self.driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
        self.console()
        self.use(PHONE)
        self.prefix = prefix

    def use(self, viewport):
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": viewport.width, "height": viewport.height, "deviceScaleFactor": viewport.scale,
            "mobile": viewport.mobile})
        self.viewport = viewport

    # Reading the page.

    def open(self, url, shot=None):
        """Loads `url` (returns once it has loaded) and takes a screenshot named `shot` when given."""
        self.driver.get(url)
        if shot:
            self.shot(shot)

    @property
    def url(self):
        return self.driver.current_url

    @property
    def title(self):
        return self.driver.title

    def status(self):
        """The HTTP status the current page was answered with."""
        return self.run("return performance.getEntriesByType('navigation')[0].responseStatus")

    def text(self, css="body"):
        """The rendered text of the first element matching `css`, as a reader sees it."""
        return self.find(css).text

    def find(self, css):
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css):
        from selenium.webdriver.common.by import By
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def run(self, script, *arguments):
        """JavaScript in the page through WebDriver (which the page's CSP does not govern)."""
        return self.driver.execute_script(script, *arguments)

    def overflow(self):
        """(document width, viewport width) in CSS pixels: a page that scrolls sideways has the
        first larger."""
        return tuple(self.run("return [document.documentElement.scrollWidth, window.innerWidth]"))

    def console(self):
        """What the page logged since the last call: [(level, text)], level SEVERE, WARNING or INFO.
        Console errors and the browser's own (a CSP refusal, a failed load) alike."""
        return [(entry["level"], entry["message"]) for entry in self.driver.get_log("browser")]

    def console_until(self, text, timeout=10.0):
        """The console's entries, read until one contains `text` or `timeout` passed (the browser
        logs some, e.g. a refused frame, after the page has loaded)."""
        entries = []
        deadline = time.monotonic() + timeout
        while not any(text in message for _, message in entries) and time.monotonic() < deadline:
            entries += self.console()
            time.sleep(0.05)
        return entries

    def frame_location(self, css="iframe"):
        """Where the frame matching `css` ended up: its URL, or chrome-error://chromewebdata/ when
        the browser refused to show it there."""
        self.driver.switch_to.frame(self.find(css))
        try:
            return self.run("return location.href")
        finally:
            self.driver.switch_to.default_content()

    def wait(self, condition, timeout=10.0):
        """Whether `condition()` came true within `timeout` seconds (polled)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    # Acting on the page (what sign-up and log-in flows need).

    def fill(self, fields, form="form"):
        """Types into the inputs of `form` by their name attribute, or chooses in its lists:
        {"email": ..., "password": ...}."""
        from selenium.webdriver.support.ui import Select
        for name, value in fields.items():
            element = self.find(f"{form} [name='{name}']")
            if element.tag_name == "select":
                # A list (the time zone): chosen by its value, as a person picks it.
                try:
                    Select(element).select_by_value(value)
                except Exception:
                    # An option without a value attribute is chosen by its text, which is its value.
                    Select(element).select_by_visible_text(value)
                continue
            element.clear()
            element.send_keys(value)

    def submit(self, form="form", shot=None):
        """Submits `form` as its submit button does and waits for the next page."""
        # A <button> without a type attribute submits too.
        button = self.find(f"{form} [type='submit'], {form} button:not([type])")
        self._navigate_by(button.click, shot)

    def click(self, css, shot=None):
        """Clicks the element matching `css` (a link or a button) and waits for the next page."""
        self._navigate_by(self.find(css).click, shot)

    def _navigate_by(self, action, shot):
        from selenium.webdriver.support.ui import WebDriverWait
        old = self.find("html")
        action()
        # The old document's element goes stale once the new one has replaced it.
        WebDriverWait(self.driver, 15).until(lambda _: self._is_stale(old))
        WebDriverWait(self.driver, 15).until(lambda d: d.execute_script("return document.readyState") == "complete")
        if shot:
            self.shot(shot)

    @staticmethod
    def _is_stale(element):
        from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
        try:
            element.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            # Asked while the new document replaces the old, Chromium answers this instead.
            if "does not belong to the document" in str(error):
                return True
            raise

    # Screenshots.

    def shot(self, name, viewport=None):
        """The whole page (not only what fits the screen) as PREFIX-NAME-VIEWPORT.png in the
        screenshots directory, at `viewport` (default the current one); its path."""
        previous = self.viewport
        if viewport is not None and viewport is not previous:
            self.use(viewport)
        try:
            used = self.viewport
            metrics = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
            # The content's size, when larger: a page too wide for the phone shows it.
            content = metrics["cssContentSize"]
            width, height = max(used.width, int(content["width"])), max(used.height, int(content["height"]))
            picture = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
            path = os.path.join(self.shots, f"{self.prefix}{name}-{used.name}.png")
            with open(path, "wb") as f:
                f.write(base64.b64decode(picture["data"]))
            return path
        finally:
            if self.viewport is not previous:
                self.use(previous)
