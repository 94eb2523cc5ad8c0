/// The `code` of an error reply: a short stable string a client can switch on. A struct rather
/// than an enum so later commands can add codes without breaking exhaustive switches.
public struct ControlErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The request is not valid: not JSON, not an object, a missing or mistyped argument.
    public static let badRequest = ControlErrorCode(rawValue: "bad_request")
    /// No such command.
    public static let unknownCommand = ControlErrorCode(rawValue: "unknown_command")
    /// The thing named does not exist (a run id, for example).
    public static let notFound = ControlErrorCode(rawValue: "not_found")
    /// Not possible in the current state (starting a run while one is recording).
    public static let conflict = ControlErrorCode(rawValue: "conflict")
    /// The daemon failed; the message says how.
    public static let internalError = ControlErrorCode(rawValue: "internal")
    /// Something the daemon relies on is not there right now (bluetoothd, the system bus).
    public static let unavailable = ControlErrorCode(rawValue: "unavailable")
    /// The peer is not allowed to use the socket.
    public static let forbidden = ControlErrorCode(rawValue: "forbidden")

    public var description: String { rawValue }
}
