import Foundation
import PacerTestSupport
import Testing

@testable import Control

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp (short: socket paths hold at most 107 bytes), removed by `remove()`.
struct TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/pacer-control-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.init(rawValue: errno)!) }
        path = String(cString: made)
    }

    var socketPath: String { path + "/control.sock" }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A server in a temp dir serving `FakeDaemon` (or another handler) until `stop()`.
final class TestServer: Sendable {
    let directory: TemporaryDirectory
    let server: ControlServer
    let daemon: FakeDaemon
    private let serving: Task<Void, Never>

    init(
        daemon: FakeDaemon = FakeDaemon(),
        configure: (inout ControlServer.Configuration) -> Void = { _ in }
    ) throws {
        directory = try TemporaryDirectory()
        var configuration = ControlServer.Configuration(socketPath: directory.socketPath)
        configure(&configuration)
        server = try ControlServer(configuration: configuration)
        self.daemon = daemon
        serving = Task { [server] in
            await server.serve { request, replies in try await daemon.handle(request, replies) }
        }
    }

    var socketPath: String { server.socketPath }

    func stop() async {
        server.stop()
        await serving.value
        directory.remove()
    }

    /// One call through a fresh ControlClient, off the pool.
    func call(_ command: String, _ arguments: [String: JSONValue] = [:]) async throws -> JSONValue? {
        let path = socketPath
        return try await offPool { try ControlClient(socketPath: path).call(command, arguments) }
    }
}

/// Runs `body` against a fresh server and stops it afterwards, also when `body` throws.
func withTestServer<Result>(
    daemon: FakeDaemon = FakeDaemon(),
    configure: (inout ControlServer.Configuration) -> Void = { _ in },
    _ body: (TestServer) async throws -> Result
) async throws -> Result {
    let server = try TestServer(daemon: daemon, configure: configure)
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

/// A stand-in for pacerd's command handling: enough commands to exercise results, errors,
/// argument checks and streaming.
actor FakeDaemon {
    private var recording = false
    private(set) var lastPeer: ControlPeer?
    /// Bytes of chunks accepted so far by `runs.export` and how each export ended.
    private(set) var exportedBytes = 0
    private(set) var exportOutcomes: [String] = []

    func handle(_ request: ControlRequest, _ replies: ControlReplyStream) async throws -> JSONValue? {
        lastPeer = request.peer
        switch request.command {
        case "status":
            return ["state": .string(recording ? "recording" : "idle"), "uid": JSONValue(Int(request.peer.uid))]
        case "run.start":
            guard !recording else { throw ControlError.conflict("a run is already recording") }
            recording = true
            return ["run": 12]
        case "runs.list":
            let limit = try request.int("limit", default: 20, in: 1...100)
            let offset = try request.int("offset", default: 0, in: 0...Int.max)
            return ["limit": JSONValue(limit), "offset": JSONValue(offset), "runs": []]
        case "runs.show":
            let run = try request.int("run")
            guard run == 12 else { throw ControlError.notFound("no run \(run)") }
            return ["run": 12, "distance_m": 5210.5]
        case "runs.export":
            _ = try request.int("run")
            _ = try request.string("format", oneOf: ["gpx", "tcx"])
            let chunks = try request.int("chunks", default: 3)
            let chunkBytes = try request.int("chunk_bytes", default: 100)
            do {
                for index in 0..<chunks {
                    let text = exportChunk(index, bytes: chunkBytes)
                    try await replies.send(chunk: text)
                    exportedBytes += text.utf8.count
                }
            } catch {
                exportOutcomes.append(error.description)
                throw error
            }
            exportOutcomes.append("completed")
            return nil
        case "echo":
            return .object(request.arguments)
        case "crash":
            struct Boom: Error, CustomStringConvertible { var description: String { "the disk caught fire" } }
            throw Boom()
        default:
            throw ControlError.unknownCommand(request.command)
        }
    }
}

/// Chunk `index` of a fake export: quotes, a newline, non-ASCII and a tab, so escaping is exercised.
func exportChunk(_ index: Int, bytes: Int) -> String {
    let head = "<trkpt n=\"\(index)\">é\t\n"
    let letter = Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(index % 26)))
    return head + String(repeating: letter, count: max(0, bytes - head.utf8.count))
}

/// A plain blocking socket for sending exactly the bytes a test wants and reading raw lines.
final class RawConnection {
    private var fd: Int32
    private var buffer: [UInt8] = []

    /// The timeout only ends a test that would otherwise hang: it is not a latency bound. The whole
    /// suite shares two cooperative threads with CPU-heavy replays, so a reply can wait its turn
    /// for many seconds on a loaded CI machine.
    init(path: String, timeoutSeconds: Int = 60) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw POSIXError(.init(rawValue: code)!)
        }
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw POSIXError(.init(rawValue: errno)!) }
            offset += sent
        }
    }

    func shutdownWriting() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// The next line without "\n"; nil at EOF (or a reset after the server closed).
    func readLine() throws -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 || (count < 0 && errno == ECONNRESET) { return nil }
            guard count > 0 else { throw POSIXError(.init(rawValue: errno)!) }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// The next line, parsed; fails the test when there is none.
    func readReply(sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        let line = try #require(try readLine(), "expected a reply line, got EOF", sourceLocation: sourceLocation)
        return try JSONValue(parsing: line)
    }

    /// Reads until EOF; the lines read.
    func readToEnd() throws -> [String] {
        var lines: [String] = []
        while let line = try readLine() { lines.append(line) }
        return lines
    }
}

func fileStatus(_ path: String) -> stat? {
    var info = stat()
    return lstat(path, &info) == 0 ? info : nil
}

let isRoot = geteuid() == 0
