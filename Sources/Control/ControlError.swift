/// An error reply: `{"id":…,"ok":false,"error":{"code":"…","message":"…"}}`.
///
/// A command handler throws one to answer with that code and message; any other error thrown
/// becomes `internal`. `ControlClient` throws the one the daemon replied with.
public struct ControlError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: ControlErrorCode
    /// For a person: says what was wrong and, where it helps, what was expected.
    public var message: String

    public init(_ code: ControlErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public static func badRequest(_ message: String) -> ControlError { ControlError(.badRequest, message) }
    public static func notFound(_ message: String) -> ControlError { ControlError(.notFound, message) }
    public static func conflict(_ message: String) -> ControlError { ControlError(.conflict, message) }
    public static func internalError(_ message: String) -> ControlError { ControlError(.internalError, message) }
    public static func unavailable(_ message: String) -> ControlError { ControlError(.unavailable, message) }
    public static func forbidden(_ message: String) -> ControlError { ControlError(.forbidden, message) }

    public static func unknownCommand(_ command: String) -> ControlError {
        ControlError(.unknownCommand, "unknown command \"\(command)\"")
    }

    public var description: String { "\(code): \(message)" }
}
