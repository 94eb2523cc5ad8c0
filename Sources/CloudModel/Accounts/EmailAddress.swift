import Foundation

/// E-mail addresses as accounts key on them: trimmed, NFKC-normalised and lower-cased, so
/// "Ann@Example.org ", "ann@example.org" and "ａｎｎ@example.org" (full-width letters) are one
/// account (almost every mail system treats the local part without case, and two accounts
/// differing only in case or in how a letter is encoded would be a trap for their owners).
/// Control and format characters (DEL, zero-width space, the bidirectional overrides) are
/// refused: they make look-alike addresses, mail no relay delivers, and log lines that read
/// backwards.
public enum EmailAddress {
    /// RFC 5321's limit on a whole address.
    static let maxLength = 254

    /// The normalised address, or why `text` is none, naming the field.
    public static func normalized(_ text: String, field: String = "email") -> Result<String, AccountInputError> {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { return .failure(AccountInputError(field: field, "\(field) is empty: give an address like name@example.org")) }
        // Checked before normalising: NFKC keeps format characters, and a refusal should name
        // what was typed, not what it became.
        if let bad = trimmed.unicodeScalars.first(where: isInvisible) {
            let code = "U+" + String(bad.value, radix: 16, uppercase: true).leftPadded(to: 4)
            return .failure(AccountInputError(field: field, "\(field) is not an e-mail address like name@example.org: it contains an invisible or control character (\(code))"))
        }
        let address = canonical(trimmed)
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard address.utf8.count <= maxLength else {
            return .failure(AccountInputError(field: field, "\(field) is longer than \(maxLength) characters"))
        }
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              !address.contains(where: { $0.isWhitespace || $0.isNewline || "<>\"(),;:[]\\".contains($0) }),
              !address.unicodeScalars.contains(where: isInvisible)
        else {
            return .failure(AccountInputError(field: field, "\(field) is not an e-mail address like name@example.org"))
        }
        return .success(address)
    }

    /// What a row stored before these rules holds, in today's form: its invisible characters
    /// dropped, then normalised; nil when even that is no address (`CloudStore.migrate`).
    public static func migrated(_ stored: String) -> String? {
        let visible = String(String.UnicodeScalarView(stored.unicodeScalars.filter { !isInvisible($0) }))
        return try? normalized(visible).get()
    }

    /// NFKC, lower-cased, NFKC again (lower-casing may decompose: "İ" becomes "i" and a
    /// combining dot).
    static func canonical(_ text: String) -> String {
        text.precomposedStringWithCompatibilityMapping.lowercased().precomposedStringWithCompatibilityMapping
    }

    /// Control (Cc: C0, DEL, C1), format (Cf: zero-width characters, bidirectional controls,
    /// soft hyphen), unassigned, private-use and surrogate code points, and line and paragraph
    /// separators: nothing an address is typed with.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .unassigned, .privateUse, .surrogate, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// A refused account field: the field's name and a message for the person who typed it.
public struct AccountInputError: Error, Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var message: String
    public init(field: String, _ message: String) {
        self.field = field
        self.message = message
    }
    public var description: String { message }
}
