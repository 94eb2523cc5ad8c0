import Crypto
import Foundation

/// Random secrets: device bearer tokens and alert page secrets, from the system's CSPRNG.
public enum Tokens {
    /// A new random token of `bytes` bytes (256 bits by default), base64url without padding.
    public static func random(bytes: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()  // getrandom(2) on Linux: cryptographic
        let data = Data((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return base64URL(data)
    }

    /// SHA-256 of `token`, hex: what is stored instead of the token.
    public static func hash(_ token: String) -> String { hex(SHA256.hash(data: Data(token.utf8))) }

    /// SHA-256 of bytes, hex.
    public static func digest(_ bytes: [UInt8]) -> String { hex(SHA256.hash(data: bytes)) }

    public static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }

    public static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Whether `text` looks like one of our secrets (so junk never reaches the database).
    public static func isWellFormedSecret(_ text: String) -> Bool {
        (16...128).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F
        }
    }
}
