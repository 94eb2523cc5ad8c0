/// A streamed reply cannot go on: the client disconnected, stopped reading for longer than the
/// write timeout, or the server is stopping. The handler should stop producing and return;
/// nothing more reaches that client.
public struct ControlStreamError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { "reply stream closed: \(reason)" }
}
