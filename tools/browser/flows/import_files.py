"""Import (`/import`, #33): several files at once in one form (a GPX walk in two tracks, a FIT
ride and a file that is no activity), each file's outcome on the answer page, the walk and the
ride listed with their sports, the ride in /stats' other sports; then a binary file's refusal,
which must not widen the page on a phone (it echoed raw bytes, 596 px)."""

import os
import subprocess
import tempfile

from browser.runner import expect, flow

EMAIL = "importer@example.org"
PASSWORD = "a long enough password 42"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@flow("import-files")
def import_files(t):
    browser, cloud = t.browser, t.cloud
    added = subprocess.run([cloud.binary, "user", "add", EMAIL, "--display-name", "Ann", "--confirmed", "--database", cloud.database],
                           input=PASSWORD + "\n", capture_output=True, text=True, timeout=60)
    expect(added.returncode == 0, f"pacer-cloud user add exited {added.returncode}: {added.stderr.strip()}")
    directory = tempfile.mkdtemp(prefix="pacer-import-flow-")
    written = subprocess.run([os.path.join(ROOT, "tools", "import-set"), "write", directory], capture_output=True, text=True, timeout=120)
    expect(written.returncode == 0, f"tools/import-set write exited {written.returncode}: {written.stderr.strip()}")
    notes = os.path.join(directory, "notes.txt")
    with open(notes, "w", encoding="utf-8") as f:
        f.write("not an activity\n")

    browser.open(cloud.url + "/login")
    browser.fill({"email": EMAIL, "password": PASSWORD})
    browser.click("form[action='/login'] button")
    browser.open(cloud.url + "/import", shot="form")
    # Several paths at once, as a person picks them in the file chooser of <input multiple>.
    browser.find("input[name='file']").send_keys("\n".join([os.path.join(directory, "segments.gpx"), os.path.join(directory, "ride.fit"), notes]))
    browser.click("form[action='/import'] button", shot="imported")
    text = browser.text()
    expect("segments.gpx: GPX walk of 2026-05-10 (Evening walk): 2.61 km" in text, f"the answer shows:\n{text}")
    expect("ride.fit: FIT ride of 2026-05-10: 14.40 km" in text, f"the answer shows:\n{text}")
    expect("notes.txt: not imported" in text, f"the answer shows:\n{text}")
    width, viewport = browser.overflow()
    expect(width <= viewport, f"the answer scrolls sideways ({width} > {viewport} CSS pixels)")

    browser.open(cloud.url + "/runs", shot="runs")
    text = browser.text()
    expect("Evening walk" in text and "Walk" in text and "Ride" in text, f"the list shows:\n{text}")
    browser.open(cloud.url + "/stats", shot="stats")
    expect("Other sports" in browser.text() and "Ride" in browser.text(), f"/stats shows:\n{browser.text()}")

    binary = os.path.join(directory, "photo.jpg")
    with open(binary, "wb") as f:
        f.write(bytes((i * 37 + 3) % 256 for i in range(4096)).replace(b"<", b"<\x01\x02\xff\xfe" * 3, 1))
    browser.open(cloud.url + "/import")
    browser.find("input[name='file']").send_keys(binary)
    browser.click("form[action='/import'] button", shot="binary-refused")
    expect("photo.jpg: this is neither a FIT file" in browser.text(), f"the refusal shows:\n{browser.text()}")
    width, viewport = browser.overflow()
    expect(width <= viewport, f"the refusal scrolls sideways ({width} > {viewport} CSS pixels)")
