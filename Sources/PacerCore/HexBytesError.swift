/// Why text is not hex bytes; `description` names the offending group.
public enum HexBytesError: Error, Sendable, Equatable, CustomStringConvertible {
    case notHex(String, String)
    case oddDigits(String)
    case emptyGroup(String)

    public var description: String {
        switch self {
        case .notHex(let group, let character): "\"\(group)\" is not hex (\"\(character)\" is not a hex digit)"
        case .oddDigits(let group): "\"\(group)\" has an odd number of hex digits; write each byte as two digits"
        case .emptyGroup(let group): "\"\(group)\" has no digits after 0x"
        }
    }
}
