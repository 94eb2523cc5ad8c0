"""schemathesis hooks for tools/fuzz-api (loaded through SCHEMATHESIS_HOOKS).

- application/x-pacer-track bodies go on the wire as the UTF-8 text they are (schemathesis has
  no serializer for a media type it does not know), gzipped when the case says
  `Content-Encoding: gzip`, as a device does (a schema cannot say that the body is gzip).
- An Idempotency-Key must equal the body's `alert_id:sequence`, a rule between two fields that a
  schema cannot state; a generated key is set to that, so that a request valid by the schema is
  valid for the server. (A mismatching key's 400 is tested in Tests/PacerCloudTests.)
- Every form (application/x-www-form-urlencoded or multipart/form-data) that has a `csrf` field
  gets the right token, so that the rest of the form reaches the route instead of the 403: the
  session's (PACER_FUZZ_CSRF, from tools/fuzz-api's log-in) on the signed-in routes, whose
  session cookie schemathesis sends as the spec's `session` scheme; on the signed-out forms
  (`security: []`), a `pacer_form` cookie and the same value in the field (double submit). A
  form generated without `csrf` keeps none (the negative case of a missing token: 403).
"""

import gzip
import os

import schemathesis


@schemathesis.serializer("application/x-pacer-track")
def track_chunk(ctx, value):
    data = value if isinstance(value, bytes) else str(value).encode("utf-8")
    headers = ctx.case.headers or {}
    if any(name.lower() == "content-encoding" and str(v).lower() == "gzip" for name, v in headers.items()):
        data = gzip.compress(data)
    return data


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    fill_csrf(case)
    headers = case.headers or {}
    key = next((name for name in headers if name.lower() == "idempotency-key"), None)
    body = case.body
    if key is None or not isinstance(body, dict):
        return
    alert_id, sequence = body.get("alert_id"), body.get("sequence")
    # 23301127.0 is a whole number in JSON, and the server reads it as one.
    if isinstance(sequence, float) and sequence.is_integer():
        sequence = int(sequence)
    if isinstance(alert_id, str) and isinstance(sequence, int) and not isinstance(sequence, bool):
        headers[key] = f"{alert_id}:{sequence}"


FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _media_type(case):
    media = getattr(case, "media_type", None) or ""
    return media.split(";")[0].strip().lower()


def fill_csrf(case):
    """The right token in a form's csrf field (see the module's note)."""
    token = os.environ.get("PACER_FUZZ_CSRF")
    if not token or _media_type(case) not in FORM_TYPES or not isinstance(case.body, dict) or "csrf" not in case.body:
        return
    raw = getattr(case.operation, "definition", None)
    raw = getattr(raw, "raw", raw) or {}
    if isinstance(raw, dict) and raw.get("security") == []:
        # Signed out: the double-submit cookie; a value of its own, not the session's token.
        value = "fuzz-form-" + token[:16]
        case.headers = dict(case.headers or {})
        case.headers["Cookie"] = f"pacer_form={value}"
        case.body["csrf"] = value
    else:
        case.body["csrf"] = token
