import Crypto

/// The signature on every webhook POST, so a receiver can tell pacer-cloud's alerts from forged
/// ones and refuse a replayed old one:
///
///     Pacer-Signature: t=1778398200,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd
///
/// `t` is when it was sent (seconds since 1970, UTC; each retry is signed anew) and `v1` the
/// lowercase hex HMAC-SHA256 of `t`, ".", and the body's bytes, keyed with the UTF-8 bytes of the
/// device's webhook secret (printed once by `pacer-cloud device add --webhook`). A receiver
/// recomputes it, compares in constant time, and refuses a `t` more than 5 minutes from its
/// clock. tools/verify-webhook is one such receiver's check.
public enum WebhookSignature {
    public static let header = "Pacer-Signature"

    /// The header's value for `body` sent at `timestamp` (seconds since 1970).
    public static func value(secret: String, timestamp: Int64, body: [UInt8]) -> String {
        let key = SymmetricKey(data: Array(secret.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Array("\(timestamp).".utf8) + body, using: key)
        return "t=\(timestamp),v1=" + mac.map { String(format: "%02x", $0) }.joined()
    }
}
