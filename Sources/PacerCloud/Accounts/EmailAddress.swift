/// E-mail addresses as accounts key on them: trimmed and lower-cased, so "Ann@Example.org " and
/// "ann@example.org" are one account (almost every mail system treats the local part without
/// case, and two accounts differing only in case would be a trap for their owners).
public enum EmailAddress {
    /// RFC 5321's limit on a whole address.
    static let maxLength = 254

    /// The normalised address, or why `text` is none, naming the field.
    public static func normalized(_ text: String, field: String = "email") -> Result<String, AccountInputError> {
        let address = text.trimmingSpaces.lowercased()
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard !address.isEmpty else { return .failure(AccountInputError(field: field, "\(field) is empty: give an address like name@example.org")) }
        guard address.utf8.count <= maxLength else {
            return .failure(AccountInputError(field: field, "\(field) is longer than \(maxLength) characters"))
        }
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              !address.contains(where: { $0.isWhitespace || $0.isNewline || "<>\"(),;:[]\\".contains($0) || $0.asciiValue.map { $0 < 0x20 } == true })
        else {
            return .failure(AccountInputError(field: field, "\(field) is not an e-mail address like name@example.org"))
        }
        return .success(address)
    }
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
