import Foundation
import PacerTestSupport
import Testing

@testable import Control

#if canImport(Glibc)
import Glibc
#endif

/// A one-shot fake daemon: listens on `path`, accepts one client, reads its request line and
/// answers with `reply` (raw bytes; nil sends nothing), then waits for the client to go.
private func fakeDaemon(at path: String, reply: String?) throws -> Thread {
    let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard Syscalls.withUnixAddress(path, { bind(listener, $0, $1) }) == 0, listen(listener, 1) == 0 else {
        throw POSIXError(.init(rawValue: errno)!)
    }
    let thread = Thread {
        let client = accept(listener, nil, nil)
        var byte: UInt8 = 0
        while read(client, &byte, 1) == 1 && byte != UInt8(ascii: "\n") {}
        if let reply { _ = Array(reply.utf8).withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        // Hold the connection until the client closes it.
        while read(client, &byte, 1) == 1 {}
        close(client)
        close(listener)
    }
    thread.start()
    return thread
}

private func clientError(_ body: () throws -> Void) -> ControlClientError? {
    do {
        try body()
        return nil
    } catch {
        return error as? ControlClientError
    }
}

@Suite(.timeLimit(.minutes(10))) struct ControlClientTests {
    @Test func aMissingSocketSaysTheDaemonIsNotRunning() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let error = clientError { _ = try ControlClient(socketPath: directory.socketPath) }
        #expect(error == .noSocket(path: directory.socketPath))
        #expect(error?.description == "pacerd is not running? no socket at \(directory.socketPath)")
        #expect(clientError { _ = try ControlClient(socketPath: "") } == .invalidPath(path: ""))
    }

    @Test func aSocketNobodyListensOnIsConnectionRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        _ = Syscalls.withUnixAddress(directory.socketPath) { bind(stale, $0, $1) }
        close(stale)
        let error = clientError { _ = try ControlClient(socketPath: directory.socketPath) }
        #expect(error == .connectionRefused(path: directory.socketPath))
        #expect(error?.description.contains("nothing is listening") == true)
    }

    @Test func permissionDeniedNamesTheGroupToJoin() throws {
        // Root is never denied, so the errno is given here; the group is read from the real file.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        _ = Syscalls.withUnixAddress(directory.socketPath) { bind(listener, $0, $1) }
        let group = getegid()
        let groupName = try #require(SystemGroup.name(ofID: group))
        let error = ControlClientError.connectFailed(path: directory.socketPath, errno: EACCES)
        #expect(error == .permissionDenied(path: directory.socketPath, group: groupName))
        #expect(error.description.contains("the control socket is for group '\(groupName)'"))
        #expect(error.description.contains("usermod -aG \(groupName)"))
        // When even the socket cannot be looked at, its directory's group is named.
        let hidden = directory.path + "/not-there.sock"
        #expect(ControlClientError.connectFailed(path: hidden, errno: EACCES) == .permissionDenied(path: hidden, group: groupName))
    }

    @Test func aMalformedReplyIsReported() async throws {
        for (reply, detail) in [
            ("this is not json\n", "invalid JSON at offset 0"),
            ("[1]\n", "not a JSON object"),
            ("{\"id\":99,\"ok\":true}\n", "reply for id 99, expected 1"),
            ("{\"id\":1}\n", "neither \"chunk\" nor \"ok\""),
            ("{\"id\":1,\"ok\":false,\"error\":\"bad\"}\n", "without error.code"),
            ("{\"id\":1,\"chunk\":5}\n", "\"chunk\" is a number"),
        ] {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            _ = try fakeDaemon(at: directory.socketPath, reply: reply)
            let path = directory.socketPath
            let error = try await offPool { clientError { _ = try ControlClient(socketPath: path).call("status") } }
            guard case .malformedReply(let message)? = error else {
                Issue.record("\(reply): \(String(describing: error))")
                continue
            }
            #expect(message.contains(detail), "\(message)")
        }
    }

    @Test func silenceTimesOutAndAnEarlyCloseIsReported() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.socketPath
        _ = try fakeDaemon(at: path, reply: nil)
        let timedOut = try await offPool {
            clientError { _ = try ControlClient(socketPath: path, timeout: .milliseconds(200)).call("status") }
        }
        #expect(timedOut == .timedOut(path: path, after: .milliseconds(200)))
        unlink(path)

        // A daemon that closes without a reply.
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        _ = Syscalls.withUnixAddress(path) { bind(listener, $0, $1) }
        listen(listener, 1)
        let closer = Thread {
            let client = accept(listener, nil, nil)
            close(client)
            close(listener)
        }
        closer.start()
        let closed = try await offPool { clientError { _ = try ControlClient(socketPath: path).call("status") } }
        #expect(closed == .disconnected(path: path))
    }

    @Test func chunksWithoutACallbackAreJoined() async throws {
        try await withTestServer { server in
            let path = server.socketPath
            let text = try await offPool {
                try ControlClient(socketPath: path).call("runs.export", ["run": 1, "format": "gpx", "chunks": 4, "chunk_bytes": 50])
            }
            #expect(text == .string((0..<4).map { exportChunk($0, bytes: 50) }.joined()))
        }
    }

    @Test func anErrorThrownByTheChunkCallbackEndsTheCall() async throws {
        struct Full: Error {}
        try await withTestServer { server in
            let path = server.socketPath
            let thrown = try await offPool { () -> Bool in
                do {
                    // 4 MB: far more than the reply buffer and the socket's hold, so the export
                    // cannot finish before the client's hang-up reaches it (100 KB could, when
                    // the client is slow to close on a loaded machine).
                    try ControlClient(socketPath: path).call("runs.export", ["run": 1, "format": "gpx", "chunks": 1000, "chunk_bytes": 4096]) { _ in throw Full() }
                    return false
                } catch {
                    return error is Full
                }
            }
            #expect(thrown)
            // The client hung up mid-stream: the export stops.
            #expect(await eventually { await server.daemon.exportOutcomes.first?.hasPrefix("reply stream closed") == true })
        }
    }

    @Test func theSocketPathComesFromTheOptionThenTheEnvironmentThenTheDefault() {
        #expect(ControlSocketPath.resolve(option: "/a.sock", environment: ["PACER_SOCKET": "/b.sock"]) == "/a.sock")
        #expect(ControlSocketPath.resolve(option: nil, environment: ["PACER_SOCKET": "/b.sock"]) == "/b.sock")
        #expect(ControlSocketPath.resolve(option: nil, environment: [:]) == "/run/pacer/control.sock")
        #expect(ControlSocketPath.resolve(option: "", environment: ["PACER_SOCKET": ""]) == "/run/pacer/control.sock")
        #expect(ControlSocketPath.resolve(option: nil, environment: [:], configured: "/c.sock") == "/c.sock")
        #expect(ControlSocketPath.resolve(option: nil, environment: ["PACER_SOCKET": "/b.sock"], configured: "/c.sock") == "/b.sock")
        // The real environment is read when none is given.
        setenv("PACER_SOCKET_UNUSED_BY_TESTS", "x", 1)
        #expect(ControlSocketPath.resolve(option: "/a.sock") == "/a.sock")
    }

    @Test func groupNamesAndIdsResolve() {
        #expect(SystemGroup.id(named: "root") == 0)
        #expect(SystemGroup.name(ofID: 0) == "root")
        #expect(SystemGroup.id(named: "no-such-group-pacer-test") == nil)
    }
}
