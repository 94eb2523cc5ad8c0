/// How a handler streams a large reply (an export) as `{"id":…,"chunk":"…"}` lines before its
/// final `{"id":…,"ok":true}`, without the daemon ever holding the whole thing.
///
/// `send(chunk:)` suspends while the client has more than the configured buffer limit unread
/// (back-pressure), and throws once the client is gone or too slow. Handlers that answer with
/// a single result simply never use it.
public struct ControlReplyStream: Sendable {
    let output: ConnectionOutput
    let id: JSONValue

    init(output: ConnectionOutput, id: JSONValue) {
        self.output = output
        self.id = id
    }

    /// Sends `text` as one chunk line. Chunks arrive in order; the client concatenates them.
    /// Sizes of 4–64 KiB keep the line count and the per-line overhead both small.
    public func send(chunk text: String) async throws(ControlStreamError) {
        try await output.sendChunk(ReplyLine.chunk(id: id, text: text))
    }

    /// False once the client has gone (or stopped reading for too long): stop producing.
    public var isConnected: Bool { output.closedReason == nil }
}
