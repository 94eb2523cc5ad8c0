import Foundation

/// The name an account shows others (monitors' dashboards, invitation e-mails, answers the
/// device speaks): one line of visible text. Control and format characters are refused at
/// sign-up, the bidirectional overrides and isolates among them (U+202E makes "moc.evil" read
/// "live.com"), so a name is what it looks like.
public enum DisplayName {
    /// The longest name, in characters.
    public static let maxCharacters = 64

    /// The name to store (trimmed, NFC), or why `text` is none, naming the field.
    public static func validated(_ text: String, field: String = "display_name") -> Result<String, AccountInputError> {
        let name = text.trimmingSpaces.precomposedStringWithCanonicalMapping
        guard !name.isEmpty, name.count <= maxCharacters else {
            return .failure(AccountInputError(field: field, "\(field) must be 1 to \(maxCharacters) characters on one line"))
        }
        if name.contains(where: \.isNewline) || name.unicodeScalars.contains(where: EmailAddress.isInvisible) {
            return .failure(AccountInputError(field: field, "\(field) must be 1 to \(maxCharacters) characters on one line, without control or invisible characters"))
        }
        return .success(name)
    }

    /// The name as plain text for an e-mail body: invisible characters (of names stored before
    /// they were refused) dropped, whitespace runs as one space, and anything a mail reader would
    /// make a link of defanged ("example.com" as "example[.]com", "https://" as "https[:]//",
    /// "@" as "[at]"), so the e-mail carries no link the operator's server did not write.
    public static func plain(_ name: String) -> String {
        let visible = String(String.UnicodeScalarView(name.unicodeScalars.filter { !EmailAddress.isInvisible($0) }))
        let words = visible.split(whereSeparator: { $0.isWhitespace || $0.isNewline }).map { defanged(String($0)) }
        let text = words.joined(separator: " ")
        return text.isEmpty ? "A Pacer user" : String(text.prefix(maxCharacters * 2))
    }

    /// What mail readers and IDNA take for a dot: ".", and the ideographic and full-width ones.
    static let dots: Set<Character> = [".", "\u{3002}", "\u{FF0E}", "\u{FF61}"]

    /// One word defanged when it looks like a host, a URL or an address: it has "://", "@",
    /// starts with "www", or has a dot with a letter or digit on each side ("J. R." stays as it is).
    public static func defanged(_ word: String) -> String {
        let characters = Array(word)
        let plain = { (character: Character) -> Bool in character.isLetter || character.isNumber }
        let dotted = characters.indices.dropFirst().dropLast().contains { (index: Int) -> Bool in
            dots.contains(characters[index]) && plain(characters[index - 1]) && plain(characters[index + 1])
        }
        let lower = word.lowercased()
        guard dotted || lower.contains("://") || word.contains("@") || word.contains("\u{FF20}") || lower.hasPrefix("www") else { return word }
        return characters.map { character -> String in
            if dots.contains(character) { return "[.]" }
            if character == "@" || character == "\u{FF20}" { return "[at]" }
            if character == ":" { return "[:]" }
            return String(character)
        }.joined()
    }
}
