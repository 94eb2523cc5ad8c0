#if canImport(Glibc)
import Glibc
#endif

/// pacerctl's end of the control socket: blocking, one request at a time.
///
/// ```swift
/// let client = try ControlClient(socketPath: ControlSocketPath.resolve(option: socketOption))
/// let status = try client.call("status")
/// try client.call("runs.export", ["run": 12, "format": "gpx"]) { text in output.write(text) }
/// ```
public final class ControlClient {
    public let socketPath: String
    /// How long to wait for each reply line (and for a send to go through).
    public let timeout: Duration
    /// A single reply line longer than this is treated as malformed (chunks are far smaller).
    public static let maximumReplyLineBytes = 64 * 1024 * 1024

    private var fd: Int32
    private var nextID = 1
    private var input: [UInt8] = []
    private var inputStart = 0

    /// Connects; the errors say what to do (start pacerd, join a group...).
    public init(socketPath: String, timeout: Duration = .seconds(30)) throws(ControlClientError) {
        self.socketPath = socketPath
        self.timeout = timeout
        fd = Syscalls.unixStreamSocket()
        guard fd >= 0 else { throw .systemCall("socket", path: socketPath, errno: errno) }
        var seconds = timeval(
            tv_sec: Int(timeout.components.seconds),
            tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        if seconds.tv_sec == 0 && seconds.tv_usec == 0 { seconds.tv_usec = 1 }  // 0 would mean "forever"
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        guard let result = Syscalls.withUnixAddress(socketPath, { connect(fd, $0, $1) }) else {
            close()
            throw .invalidPath(path: socketPath)
        }
        if result != 0 {
            let code = errno
            close()
            throw .connectFailed(path: socketPath, errno: code)
        }
    }

    deinit {
        close()
    }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends `command` with `arguments` and waits for the final reply line.
    ///
    /// Streamed chunks go to `onChunk` in order as they arrive (an error it throws ends the call
    /// and the connection). Without `onChunk` they are joined and returned as a string result.
    /// Returns the reply's `result` (nil when it has none); throws the daemon's `ControlError`
    /// for an error reply, or a `ControlClientError`.
    @discardableResult
    public func call(
        _ command: String, _ arguments: [String: JSONValue] = [:], onChunk: ((String) throws -> Void)? = nil
    ) throws -> JSONValue? {
        guard fd >= 0 else { throw ControlClientError.disconnected(path: socketPath) }
        let id = nextID
        nextID += 1
        var request = arguments
        request["id"] = JSONValue(id)
        request["command"] = .string(command)
        var line: [UInt8] = []
        JSONValue.object(request).serialize(into: &line)
        line.append(UInt8(ascii: "\n"))
        // A refused peer is sent one line and closed, possibly before our request is written:
        // a failed send still reads what the daemon said.
        let sendError = sendAll(line)

        var collected: String?
        while true {
            guard let replyLine = try readLine() else {
                if let sendError { throw sendError }
                throw ControlClientError.disconnected(path: socketPath)
            }
            let reply: JSONValue
            do {
                reply = try JSONValue(parsing: replyLine)
            } catch {
                throw ControlClientError.malformedReply("\(error) in \(Self.excerpt(replyLine))")
            }
            guard case .object(let members) = reply else {
                throw ControlClientError.malformedReply("not a JSON object: \(Self.excerpt(replyLine))")
            }
            let replyID = members["id"] ?? .null
            guard replyID == JSONValue(id) || replyID == .null else {
                throw ControlClientError.malformedReply("reply for id \(replyID), expected \(id)")
            }
            if let chunk = members["chunk"] {
                guard case .string(let text) = chunk else {
                    throw ControlClientError.malformedReply("\"chunk\" is \(chunk.kindDescription), not a string")
                }
                if let onChunk { try onChunk(text) } else { collected = (collected ?? "") + text }
                continue
            }
            switch members["ok"] {
            case .bool(true)?:
                return members["result"] ?? collected.map(JSONValue.string)
            case .bool(false)?:
                guard let code = members["error"]?["code"]?.stringValue,
                    let message = members["error"]?["message"]?.stringValue
                else {
                    throw ControlClientError.malformedReply("error reply without error.code and error.message")
                }
                throw ControlError(ControlErrorCode(rawValue: code), message)
            default:
                throw ControlClientError.malformedReply("neither \"chunk\" nor \"ok\" in \(Self.excerpt(replyLine))")
            }
        }
    }

    private func sendAll(_ bytes: [UInt8]) -> ControlClientError? {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                offset += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                return .timedOut(path: socketPath, after: timeout)
            } else {
                return errno == EPIPE || errno == ECONNRESET
                    ? .disconnected(path: socketPath) : .systemCall("send", path: socketPath, errno: errno)
            }
        }
        return nil
    }

    /// The next line without its newline; nil at the end of the stream.
    private func readLine() throws(ControlClientError) -> ArraySlice<UInt8>? {
        // Drop consumed lines so a long stream of chunks does not accumulate.
        if inputStart > 0 && (inputStart == input.count || inputStart >= 65_536) {
            input.removeFirst(inputStart)
            inputStart = 0
        }
        var searchFrom = inputStart
        while true {
            if let newline = input[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = input[inputStart..<newline]
                inputStart = newline + 1
                return line
            }
            searchFrom = input.count
            guard input.count - inputStart <= Self.maximumReplyLineBytes else {
                throw .malformedReply("a reply line longer than \(Self.maximumReplyLineBytes) bytes")
            }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                input.append(contentsOf: buffer[0..<count])
            } else if count == 0 || errno == ECONNRESET {
                // A refused peer's line may be followed by ECONNRESET rather than a clean end.
                return nil
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                throw .timedOut(path: socketPath, after: timeout)
            } else {
                throw .systemCall("recv", path: socketPath, errno: errno)
            }
        }
    }

    private static func excerpt(_ line: ArraySlice<UInt8>) -> String {
        let text = String(decoding: line.prefix(120), as: UTF8.self)
        return line.count > 120 ? text + "…" : text
    }
}
