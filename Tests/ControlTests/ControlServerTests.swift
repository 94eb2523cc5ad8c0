import Foundation
import PacerTestSupport
import Testing

@testable import Control

#if canImport(Glibc)
import Glibc
#endif

@Suite(.timeLimit(.minutes(10))) struct ControlServerTests {
    @Test func commandsRoundTrip() async throws {
        try await withTestServer { server in
            let path = server.socketPath
            let results = try await offPool { () -> [JSONValue?] in
                let client = try ControlClient(socketPath: path)
                return [
                    try client.call("status"),
                    try client.call("run.start"),
                    try client.call("status"),
                    try client.call("runs.list", ["limit": 5, "offset": 10]),
                    try client.call("runs.show", ["run": 12]),
                ]
            }
            #expect(results[0]?["state"] == "idle")
            #expect(results[1]?["run"] == 12)
            #expect(results[2]?["state"] == "recording")
            #expect(results[3] == ["limit": 5, "offset": 10, "runs": []])
            #expect(results[4]?["distance_m"] == 5210.5)
            // The handler sees who asked: the tests' own user.
            #expect(results[0]?["uid"]?.intValue == Int(geteuid()))
        }
    }

    @Test func errorRepliesCarryTheirCodes() async throws {
        try await withTestServer { server in
            let path = server.socketPath
            let errors = try await offPool { () -> [ControlError?] in
                let client = try ControlClient(socketPath: path)
                _ = try client.call("run.start")
                func failure(_ command: String, _ arguments: [String: JSONValue] = [:]) -> ControlError? {
                    do {
                        _ = try client.call(command, arguments)
                        return nil
                    } catch {
                        return error as? ControlError
                    }
                }
                return [
                    failure("run.start"), failure("runs.show", ["run": 404]), failure("fly"),
                    failure("crash"), failure("runs.show", ["run": "twelve"]),
                ]
            }
            #expect(errors[0] == .conflict("a run is already recording"))
            #expect(errors[1] == .notFound("no run 404"))
            #expect(errors[2] == .unknownCommand("fly"))
            #expect(errors[3] == .internalError("crash failed: the disk caught fire"))
            #expect(errors[4] == .badRequest("runs.show: argument \"run\" must be an integer, got a string (\"twelve\")"))
        }
    }

    @Test func idsAreEchoed() async throws {
        try await withTestServer { server in
            let path = server.socketPath
            let ids = try await offPool { () -> [JSONValue?] in
                let connection = try RawConnection(path: path)
                var ids: [JSONValue?] = []
                for id in ["7", "\"abc\"", "1.5", "-3", "9007199254740991", "null"] {
                    try connection.send("{\"id\":\(id),\"command\":\"status\"}\n")
                    ids.append(try connection.readReply()["id"])
                }
                try connection.send("{\"command\":\"status\"}\n")
                ids.append(try connection.readReply()["id"])
                // Errors echo the id too.
                try connection.send("{\"id\":\"e1\",\"command\":\"fly\"}\n")
                ids.append(try connection.readReply()["id"])
                return ids
            }
            #expect(ids == [7, "abc", 1.5, -3, 9_007_199_254_740_991, .null, .null, "e1"])
        }
    }

    @Test func badRequestsGetErrorRepliesAndTheConnectionStaysUsable() async throws {
        try await withTestServer { server in
            let path = server.socketPath
            let replies = try await offPool { () -> [JSONValue] in
                let connection = try RawConnection(path: path)
                var replies: [JSONValue] = []
                for line in [
                    #"{"id":1,"command":"status""#,  // truncated
                    "[1,2,3]",
                    #"{"id":2}"#,
                    #"{"id":3,"command":"runs.show","run":"12"}"#,
                    "\u{1}\u{2}garbage",
                    #"{"id":4,"command":"status"}"#,
                ] {
                    try connection.send(line + "\n")
                    replies.append(try connection.readReply())
                }
                return replies
            }
            for reply in replies.prefix(5) {
                #expect(reply["ok"] == false)
                #expect(reply["error"]?["code"] == "bad_request")
            }
            #expect(replies[0]["id"] == .null)
            #expect(replies[0]["error"]?["message"]?.stringValue?.hasPrefix("invalid JSON at offset 26") == true)
            #expect(replies[1]["error"]?["message"] == "a request must be a JSON object, not an array")
            #expect(replies[2]["id"] == 2)
            #expect(replies[2]["error"]?["message"]?.stringValue?.contains("missing \"command\"") == true)
            #expect(replies[3]["id"] == 3)
            #expect(replies[3]["error"]?["message"]?.stringValue?.contains("argument \"run\" must be an integer") == true)
            #expect(replies[5]["ok"] == true)
            #expect(replies[5]["id"] == 4)
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await withTestServer { server in
            let path = server.socketPath
            let ids = try await offPool { () -> [JSONValue?] in
                let connection = try RawConnection(path: path)
                let batch = (1...50).map { #"{"id":\#($0),"command":"runs.list","limit":\#($0)}"# }.joined(separator: "\r\n")
                // Blank lines are skipped; the last request has no newline and ends with the half-close.
                try connection.send("\n  \n" + batch)
                connection.shutdownWriting()
                return try connection.readToEnd().map { try JSONValue(parsing: $0)["id"] }
            }
            #expect(ids == (1...50).map { JSONValue($0) })
        }
    }

    @Test func anOverlongRequestIsRefusedAndTheServerKeepsServing() async throws {
        try await withTestServer { server in
            let path = server.socketPath
            for terminated in [false, true] {
                let lines = try await offPool { () -> [String] in
                    let connection = try RawConnection(path: path)
                    let long = #"{"id":1,"command":"echo","pad":""# + String(repeating: "x", count: 70_000) + "\"}"
                    try? connection.send(long + (terminated ? "\n" : ""))
                    return try connection.readToEnd()
                }
                #expect(lines.count == 1, "one error reply, then the server closed the connection")
                let reply = try JSONValue(parsing: lines.first ?? "")
                #expect(reply["id"] == .null)
                #expect(reply["error"]?["code"] == "bad_request")
                #expect(reply["error"]?["message"]?.stringValue?.contains("longer than 65536 bytes") == true)
            }
            // A request just under the limit is fine, and new connections work.
            let padded = try await server.call("echo", ["pad": .string(String(repeating: "y", count: 60_000))])
            #expect(padded?["pad"]?.stringValue?.count == 60_000)
        }
    }

    @Test func aChunkedReplyIsStreamedInOrder() async throws {
        try await withTestServer { server in
            let path = server.socketPath
            let chunkCount = 300
            let chunkBytes = 10_000
            let (chunks, result) = try await offPool { () -> ([String], JSONValue?) in
                let client = try ControlClient(socketPath: path)
                var chunks: [String] = []
                let result = try client.call(
                    "runs.export", ["run": 12, "format": "gpx", "chunks": JSONValue(chunkCount), "chunk_bytes": JSONValue(chunkBytes)]
                ) { chunks.append($0) }
                return (chunks, result)
            }
            #expect(result == nil)
            #expect(chunks.count == chunkCount)
            #expect(chunks == (0..<chunkCount).map { exportChunk($0, bytes: chunkBytes) })
            #expect(await server.daemon.exportOutcomes == ["completed"])

            // The raw lines: chunk lines with the id, then a final line without a result.
            let lines = try await offPool { () -> [String] in
                let connection = try RawConnection(path: path)
                try connection.send(#"{"id":"x","command":"runs.export","run":1,"format":"tcx","chunks":2,"chunk_bytes":20}"# + "\n")
                connection.shutdownWriting()
                return try connection.readToEnd()
            }
            #expect(lines.count == 3)
            #expect(try lines.prefix(2).map { try JSONValue(parsing: $0) } == [
                ["id": "x", "chunk": .string(exportChunk(0, bytes: 20))], ["id": "x", "chunk": .string(exportChunk(1, bytes: 20))],
            ])
            #expect(lines.last == #"{"id":"x","ok":true}"#)
        }
    }

    @Test func aClientThatStopsReadingHoldsUpNobodyAndBoundsTheBuffer() async throws {
        let limit = 64 * 1024
        try await withTestServer(configure: { $0.replyBufferLimit = limit; $0.writeTimeout = .seconds(120) }) { server in
            let path = server.socketPath
            let chunkBytes = 16 * 1024
            let chunkCount = 2_000  // 32 MB: far more than any socket buffer
            let stalled = try await offPool {
                let connection = try RawConnection(path: path)
                try connection.send(#"{"id":1,"command":"runs.export","run":1,"format":"gpx","chunks":2000,"chunk_bytes":16384}"# + "\n")
                return UncheckedBox(connection)
            }
            // Wait until the producer is suspended: its count stops moving.
            var previous = -1
            let settled = await eventually(timeout: .seconds(20)) {
                let now = await server.daemon.exportedBytes
                defer { previous = now }
                return now > 0 && now == previous
            }
            #expect(settled)
            let queued = await server.daemon.exportedBytes
            // What the daemon accepted is bounded by its buffer limit plus what the kernel's socket
            // buffers hold (a few hundred KiB), nowhere near the whole export.
            #expect(queued < 4 * 1024 * 1024)
            #expect(queued < chunkCount * chunkBytes / 8)

            // Meanwhile other clients are served, a whole streamed export included.
            let status = try await server.call("status")
            #expect(status?["state"] == "idle")
            let other = try await offPool { () -> Int in
                var total = 0
                try ControlClient(socketPath: path).call(
                    "runs.export", ["run": 2, "format": "gpx", "chunks": 100, "chunk_bytes": 16384]
                ) { total += $0.utf8.count }
                return total
            }
            #expect(other == 100 * 16_384)

            // When the stalled client goes away, its export stops with a stream error.
            stalled.value.close()
            #expect(await eventually { await server.daemon.exportOutcomes.count == 2 })
            let outcomes = await server.daemon.exportOutcomes
            #expect(outcomes.contains("completed"))
            #expect(outcomes.contains { $0.hasPrefix("reply stream closed") })
        }
    }

    @Test func aClientThatReadsNothingIsDroppedAfterTheWriteTimeout() async throws {
        try await withTestServer(configure: { $0.replyBufferLimit = 32 * 1024; $0.writeTimeout = .milliseconds(300) }) { server in
            let path = server.socketPath
            let stalled = try await offPool {
                let connection = try RawConnection(path: path)
                try connection.send(#"{"id":1,"command":"runs.export","run":1,"format":"gpx","chunks":5000,"chunk_bytes":16384}"# + "\n")
                return UncheckedBox(connection)
            }
            #expect(await eventually(timeout: .seconds(20)) { await server.daemon.exportOutcomes.count == 1 })
            let outcome = await server.daemon.exportOutcomes.first ?? ""
            #expect(outcome.contains("client read nothing for"), "\(outcome)")
            // The dropped client finds the connection closed after what had been sent.
            let lines = try await offPool { try stalled.value.readToEnd() }
            #expect(lines.count < 5000)
            #expect(!lines.contains { $0.contains("\"ok\"") })
            // And the server is still fine.
            #expect(try await server.call("status")?["state"] == "idle")
        }
    }

    @Test func stoppingEndsAStreamThatIsWaitingForTheClient() async throws {
        try await withTestServer(configure: { $0.replyBufferLimit = 32 * 1024; $0.writeTimeout = .seconds(120) }) { server in
            let path = server.socketPath
            let stalled = try await offPool {
                let connection = try RawConnection(path: path)
                try connection.send(#"{"id":1,"command":"runs.export","run":1,"format":"gpx","chunks":5000,"chunk_bytes":16384}"# + "\n")
                return UncheckedBox(connection)
            }
            #expect(await eventually { await server.daemon.exportedBytes > 0 })
            server.server.stop()
            #expect(await eventually { await server.daemon.exportOutcomes.count == 1 })
            #expect(await server.daemon.exportOutcomes == ["reply stream closed: the control server stopped"])
            #expect(fileStatus(path) == nil)
            withExtendedLifetime(stalled) {}
        }
    }

    @Test func theSocketFileHasTheConfiguredModeAndGroup() async throws {
        // Root may chown to any group; anyone may chown to a group they are in.
        let group: UInt32 = isRoot ? 4242 : getegid()
        try await withTestServer(configure: { $0.group = group }) { server in
            let info = try #require(fileStatus(server.socketPath))
            #expect(info.st_mode & S_IFMT == S_IFSOCK)
            #expect(info.st_mode & 0o7777 == 0o660)
            #expect(info.st_gid == group)
        }
    }

    @Test func aStaleSocketFileIsReplaced() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A socket file nobody listens on, as a killed pacerd leaves it.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        _ = Syscalls.withUnixAddress(directory.socketPath) { bind(stale, $0, $1) }
        close(stale)
        #expect(fileStatus(directory.socketPath).map { $0.st_mode & S_IFMT == S_IFSOCK } == true)

        let server = try ControlServer(configuration: .init(socketPath: directory.socketPath))
        let serving = Task { await server.serve { _, _ in "pong" } }
        let path = directory.socketPath
        #expect(try await offPool { try ControlClient(socketPath: path).call("ping") } == "pong")

        // A second server on the same live socket is refused and leaves the first one alone.
        #expect(throws: ControlServerError.alreadyListening(path: path)) {
            try ControlServer(configuration: .init(socketPath: path))
        }
        #expect(try await offPool { try ControlClient(socketPath: path).call("ping") } == "pong")

        // Stopping removes the socket file and ends serve().
        server.stop()
        await serving.value
        #expect(fileStatus(path) == nil)
        #expect(throws: ControlClientError.noSocket(path: path)) { try ControlClient(socketPath: path) }
    }

    @Test func somethingElseAtTheSocketPathIsLeftAlone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try "precious".write(toFile: directory.socketPath, atomically: false, encoding: .utf8)
        #expect(throws: ControlServerError.notASocket(path: directory.socketPath)) {
            try ControlServer(configuration: .init(socketPath: directory.socketPath))
        }
        #expect(try String(contentsOfFile: directory.socketPath, encoding: .utf8) == "precious")
        let long = "/tmp/" + String(repeating: "d", count: 120) + "/control.sock"
        #expect(throws: ControlServerError.socketPathTooLong(path: long)) {
            try ControlServer(configuration: .init(socketPath: long))
        }
        #expect(throws: ControlServerError.self) {
            try ControlServer(configuration: .init(socketPath: directory.path + "/missing/control.sock"))
        }
    }
}

/// Carries a non-Sendable test object between the test and its helper threads; the test uses
/// it from one thread at a time.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
