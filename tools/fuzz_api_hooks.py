"""schemathesis hooks for tools/fuzz-api (loaded through SCHEMATHESIS_HOOKS).

- application/x-pacer-track bodies go on the wire as the UTF-8 text they are (schemathesis has
  no serializer for a media type it does not know), gzipped when the case says
  `Content-Encoding: gzip`, as a device does (a schema cannot say that the body is gzip).
- An Idempotency-Key must equal the body's `alert_id:sequence`, a rule between two fields that a
  schema cannot state; a generated key is set to that, so that a request valid by the schema is
  valid for the server. (A mismatching key's 400 is tested in Tests/PacerCloudTests.)
"""

import gzip

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
