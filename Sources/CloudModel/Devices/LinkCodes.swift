/// Device link codes: read off the "My devices" page and typed on the device, so short and
/// without look-alikes (no 0/O, 1/I/L). 8 of 31 characters is about 40 bits: with one live code
/// per account, single use, 10 minutes, and `POST /v1/link` rate-limited per address, guessing
/// one is hopeless. Only its SHA-256 is stored.
public enum LinkCodes {
    public static let alphabet = Array("23456789ABCDEFGHJKMNPQRSTUVWXYZ")
    public static let length = 8
    public static let lifetimeMs: Int64 = 10 * 60_000
    /// Used and expired codes are kept this long, so a second try says "used" or "expired"
    /// rather than "unknown"; then purged.
    public static let keptAfterExpiryMs: Int64 = 24 * 3_600_000

    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()  // getrandom(2): cryptographic
        return String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
    }

    /// As typed ("abcd-efgh", "ABCD EFGH\n") to the stored form ("ABCDEFGH"); nil when it is
    /// not 8 characters of the alphabet, dashes, spaces, tabs and line breaks aside (what
    /// openapi.yaml's pattern allows).
    public static func normalized(_ typed: String) -> String? {
        // By scalar: "\r\n" is one Character.
        let characters = String(String.UnicodeScalarView(typed.uppercased().unicodeScalars.filter { !"- \t\n\r".unicodeScalars.contains($0) }))
        guard characters.count == length, characters.allSatisfy(alphabet.contains) else { return nil }
        return characters
    }

    /// "ABCD-EFGH": easier to read and type in two halves.
    public static func display(_ code: String) -> String { String(code.prefix(length / 2)) + "-" + String(code.dropFirst(length / 2)) }

    public static func hash(_ code: String) -> String { Tokens.hash("link-code:" + code) }

    /// A device name a link may ask for: 1 to 64 of letters, digits, '.', '_' and '-', starting
    /// with a letter or digit (it appears in pages and logs).
    public static func isValidDeviceName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 64 else { return false }
        let plain = { (scalar: Unicode.Scalar) in scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) }
        return plain(first) && name.unicodeScalars.allSatisfy { plain($0) || ".-_".unicodeScalars.contains($0) }
    }
}

/// What taking a device link code gave (`CloudStore.linkDevice`).
public enum LinkOutcome: Sendable, Equatable {
    /// The device, owned by the code's account; `relinked`: it existed and got a new token.
    case linked(Device, relinked: Bool)
    /// No code has that hash (mistyped, or purged a day after it expired).
    case unknownCode
    case usedCode
    case expiredCode
    /// Another account's device (or one no account owns) has the name; the code was not used.
    case nameTaken
}
