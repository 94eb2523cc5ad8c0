import Foundation
import PacerCore
import PacerTestSupport
import Store
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// pacerd as systemd runs it: READY/STATUS/STOPPING, SIGTERM, SIGHUP, the watchdog, its config
/// checks and its control socket's answers to bad requests.
@Suite(.serialized, .timeLimit(.minutes(10))) struct LifecycleTests {
    @Test func readyWithoutGPSdThenStoppingOnSIGTERM() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())  // nothing listens there
        defer { daemon.cleanUp() }
        try await daemon.start()
        print("LifecycleTests: READY=1 \(daemon.readyLatency) after spawn, without gpsd")
        #expect(await daemon.notify.wait { $0 == "STATUS=Idle, gpsd not reachable, HR strap not paired" } != nil)
        let status = try await daemon.ctl("status")
        #expect(status.status == 0)
        #expect(status.stdout == "Idle, gpsd not reachable, HR strap not paired\nstrap: not paired (pacerctl strap scan, then pacerctl strap pair ADDRESS)\nuploads: off (no [upload] url)\n")
        #expect(await daemon.stop() == .exited(0))
        #expect(daemon.notify.assignments.contains { $0.line == "STOPPING=1" })
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
    }

    @Test(.enabled(if: DaemonFixture.hasSharedData))
    func sigtermMidRunClosesTheRunWithItsLastBatch() async throws {
        let (fake, daemon) = try await DaemonFixture.onGPSFake(route: "walk-1", cycle: 0.01)
        defer { Task { await fake.stop() } }
        defer { daemon.cleanUp() }
        #expect(try await daemon.startRun(releasing: fake).status == 0)
        let seen = try await daemon.waitForStatus { ($0["distance_m"] as? Double ?? 0) > 100 }
        let seenTime = try #require((seen["last_sample_time"] as? String).flatMap(Timestamp.init(iso8601:)))
        #expect(await daemon.stop() == .exited(0))
        let store = try RunStore(path: daemon.databasePath, readOnly: true)
        let run = try #require(try store.run(1))
        #expect(run.state == .finished)
        // The last batch was written: nothing the status showed is missing.
        let samples = try store.track(1).samples
        #expect(samples.last.map { $0.time >= seenTime } == true)
        #expect(run.endTime == samples.last?.time)
    }

    @Test func sighupReloadsAndAnInvalidFileKeepsTheRunningConfig() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        try await daemon.start()
        // Broken on line 10 (the fixture writes 8 lines before the extra text).
        try daemon.writeConfig("[tracking]\nsplit_distance_m = \"far\"")
        daemon.process?.send(SIGHUP)
        let refused = try await Self.waitFor(in: daemon, "reload refused")
        #expect(refused.contains("\(daemon.configPath):10: tracking.split_distance_m: expected a distance in metres"))
        #expect(try await daemon.ctl("status").status == 0)  // still serving
        try daemon.writeConfig("[units]\nsystem = \"imperial\"")
        daemon.process?.send(SIGHUP)
        _ = try await Self.waitFor(in: daemon, "configuration reloaded")
        #expect(daemon.notify.assignments.contains { $0.line.hasPrefix("RELOADING=1") })
        #expect(daemon.notify.assignments.filter { $0.line == "READY=1" }.count == 3)  // start + two reloads
        #expect(await daemon.stop() == .exited(0))
    }

    @Test func watchdogPingsAtHalfTheInterval() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        try await daemon.start(environment: ["WATCHDOG_USEC": "400000"])
        try await Task.sleep(for: .seconds(2))
        let pings = daemon.notify.assignments.filter { $0.line == "WATCHDOG=1" }.map(\.at)
        // 200 ms apart over 2 s: about ten (an exact count would be a timing assertion).
        #expect(pings.count >= 5)
        #expect(await daemon.stop() == .exited(0))
    }

    @Test func checkConfigNamesFileLineAndKey() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-check")
        defer { directory.remove() }
        let bad = directory.file("bad.toml")
        try "[gps]\nhost = \"localhost\"\nport = 99999\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try await DaemonFixture.run(DaemonFixture.binary("pacerd"), ["--check-config", bad])
        #expect(refused.status == 78)
        #expect(refused.stderr == "\(bad):3: gps.port: expected a TCP port from 1 to 65535, got 99999\n")
        let shipped = try await DaemonFixture.run(DaemonFixture.binary("pacerd"), ["--check-config", DaemonFixture.repositoryRoot + "/config/pacer.toml"])
        #expect(shipped.status == 0, "\(shipped.stderr)")
        // Started with the bad file, pacerd refuses to run, with the same words.
        let start = try await DaemonFixture.run(DaemonFixture.binary("pacerd"), ["--config", bad])
        #expect(start.status == 78)
        #expect(start.stderr.contains("\(bad):3: gps.port:"))
        let missing = try await DaemonFixture.run(DaemonFixture.binary("pacerd"), ["--config", directory.file("nope.toml")])
        #expect(missing.status == 78)
        #expect(missing.stderr.contains("nope.toml: no such config file"))
    }

    @Test func badRequestsAndRefusedCommandsAnswerClearly() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        try await daemon.start()
        let stop = try await daemon.ctl("run", "stop")
        #expect(stop.status == 75)
        #expect(stop.stderr == "pacerctl: no run in progress\n")
        let lap = try await daemon.ctl("run", "lap")
        #expect(lap.stderr == "pacerctl: no run in progress\n")
        let show = try await daemon.ctl("runs", "show", "42")
        #expect(show.status == 66)
        #expect(show.stderr == "pacerctl: no run 42\n")
        let delete = try await daemon.ctl("runs", "delete", "42")
        #expect(delete.status == 66)

        // Raw protocol: garbage, a non-object, an unknown command, a wrong argument type.
        let replies = try Self.exchange(daemon.socketPath, [
            "this is not json", "[1,2]", #"{"id":7,"command":"fly"}"#, #"{"id":8,"command":"runs.show","run":"twelve"}"#,
            #"{"id":9,"command":"status"}"#,
        ])
        #expect(replies.count == 5)
        #expect(replies[0].contains(#""code":"bad_request""#))
        #expect(replies[1].contains(#""code":"bad_request""#))
        #expect(replies[2].contains(#""id":7"#) && replies[2].contains(#""code":"unknown_command""#))
        #expect(replies[3].contains(#""id":8"#) && replies[3].contains(#""code":"bad_request""#) && replies[3].contains("run"))
        #expect(replies[4].contains(#""id":9"#) && replies[4].contains(#""ok":true"#))
        #expect(daemon.process?.isRunning == true)
        #expect(await daemon.stop() == .exited(0))
    }

    // MARK: Helpers

    static func waitFor(in daemon: DaemonFixture, _ text: String) async throws -> String {
        for _ in 0..<500 {
            if let line = daemon.stderr.split(separator: "\n").first(where: { $0.contains(text) }) { return String(line) }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw FixtureError("pacerd never logged '\(text)': \(daemon.stderr)")
    }

    /// Sends each line on one connection and reads one reply line per request.
    static func exchange(_ path: String, _ lines: [String]) throws -> [String] {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() where i < raw.count - 1 { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw FixtureError("connect \(path): \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var replies: [String] = []
        var buffer: [UInt8] = []
        for line in lines {
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            while !buffer.contains(10) {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { return replies }
                buffer += chunk[0..<n]
            }
            let end = buffer.firstIndex(of: 10)!
            replies.append(String(decoding: buffer[..<end], as: UTF8.self))
            buffer.removeSubrange(...end)
        }
        return replies
    }
}
