import Foundation

/// What the runner says of one of their activities, beside what was recorded: its name, notes,
/// sport and who sees it (migration 0003).
public struct RunDetails: Sendable, Equatable {
    /// NULL in the store: no name given (the pages say "Run of <date>").
    public var title: String?
    public var notes: String?
    public var sport: Sport
    public var visibility: RunVisibility
    /// Whether a share link is live (its secret is never stored, only its hash).
    public var shared: Bool
    /// Why the run cannot be right; nil: believed.
    public var doubt: String?

    public init(title: String? = nil, notes: String? = nil, sport: Sport = .run, visibility: RunVisibility = .private, shared: Bool = false,
                doubt: String? = nil) {
        self.title = title
        self.notes = notes
        self.sport = sport
        self.visibility = visibility
        self.shared = shared
        self.doubt = doubt
    }

    /// The longest name, in characters, and the longest notes.
    public static let maxTitleCharacters = 100
    public static let maxNotesCharacters = 4_000

    /// The name to store (trimmed, NFC; nil when empty), or why it is none, naming the field: one
    /// line of visible text, as a display name (it is shown on share pages to anyone).
    public static func validatedTitle(_ text: String) -> Result<String?, AccountInputError> {
        let title = text.trimmingSpaces.precomposedStringWithCanonicalMapping
        if title.isEmpty { return .success(nil) }
        guard title.count <= maxTitleCharacters, !title.contains(where: \.isNewline),
              !title.unicodeScalars.contains(where: EmailAddress.isInvisible) else {
            return .failure(AccountInputError(field: "title", "title: one line of up to \(maxTitleCharacters) characters, without invisible characters"))
        }
        return .success(title)
    }

    /// Notes to store (line ends as "\n", trimmed; nil when empty): lines of visible text and tabs.
    public static func validatedNotes(_ text: String) -> Result<String?, AccountInputError> {
        let notes = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        if notes.isEmpty { return .success(nil) }
        guard notes.count <= maxNotesCharacters else {
            return .failure(AccountInputError(field: "notes", "notes: at most \(maxNotesCharacters) characters (these are \(notes.count))"))
        }
        guard !notes.unicodeScalars.contains(where: { $0 != "\n" && $0 != "\t" && EmailAddress.isInvisible($0) }) else {
            return .failure(AccountInputError(field: "notes", "notes: an invisible or control character is in them; type them again without it"))
        }
        return .success(notes)
    }
}
