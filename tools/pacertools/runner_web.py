"""The runner's side of pacer-cloud's web pages over plain HTTP (Python stdlib only, the forms'
CSRF tokens as a browser sends them), for tools/demo:

    runner_web.py URL EMAIL PASSWORD plan DATE NAME      a session on DATE: 800 m warm-up,
                                                         6 x (400 m at 3:10-3:30 /km, 200 m recover)
    runner_web.py URL EMAIL PASSWORD run                 the newest run's page, summed up

Exits 0 when the page answered as expected.
"""

import html
import json
import re
import sys

from monitor import WebSession


def plan(session, date, name):
    fields = {"name": name, "date": date, "weeks": "1",
              "step1_type": "warmup", "step1_end": "distance", "step1_amount": "800 m", "step1_target": "none",
              "step2_type": "repeat", "step2_times": "6", "step2_block": "2",
              "step3_type": "run", "step3_end": "distance", "step3_amount": "400 m", "step3_target": "pace", "step3_value": "3:10-3:30",
              "step4_type": "recover", "step4_end": "distance", "step4_amount": "200 m", "step4_target": "none"}
    status = session.post("/plan/sessions", fields, "/plan/new?date=" + date)
    print(f"    POST /plan/sessions: {status}")
    return status == 303


def text_of(fragment):
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def run(session):
    _, runs = session.request("/runs")
    found = re.search(r'href="(/runs/[0-9a-f-]{36})"', runs)
    if not found:
        print("    no run on /runs")
        return False
    path = found.group(1)
    status, page = session.request(path)
    title = re.search(r"<h1>(.*?)</h1>", page, re.S)
    print(f"    {session.base}{path} ({status}): {text_of(title.group(1)) if title else '?'}")
    for pattern in (r'<p class="summary">(.*?)</p>', r'<p id="followed">(.*?)</p>', r"<p>(Workout: .*?)</p>"):
        found = re.search(pattern, page, re.S)
        if found:
            print(f"      {text_of(found.group(1))}")
    data = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', page, re.S)
    if data:
        run_data = json.loads(html.unescape(data.group(1)))
        pace = [v for v in run_data.get("pace", []) if v is not None]
        heart = [v for v in run_data.get("hr", []) if v is not None]
        print(f"      map: a track of {len(run_data.get('track', []))} points (simplified on the server), {len(run_data.get('marks', []))} {run_data.get('unit', 'km')} marks;"
              f" charts: pace over {len(pace)} distance buckets, heart rate over {len(heart)}")
    return status == 200


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 64
    base, email, password, command, rest = argv[1], argv[2], argv[3], argv[4], argv[5:]
    session = WebSession(base)
    session.log_in(email, password)
    if command == "plan" and len(rest) == 2:
        return 0 if plan(session, rest[0], rest[1]) else 1
    if command == "run":
        return 0 if run(session) else 1
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv))
