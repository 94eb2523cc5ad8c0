import Foundation
import PacerTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The run button, through a FIFO standing in for the evdev node (no uinput here): short press
/// starts, short press again marks a lap, long press stops.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ButtonTests {
    static func key(_ code: UInt16, _ value: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: Int(0)) { bytes += $0 }  // struct timeval: seconds, microseconds
        withUnsafeBytes(of: Int(0)) { bytes += $0 }
        withUnsafeBytes(of: UInt16(1)) { bytes += $0 }  // EV_KEY
        withUnsafeBytes(of: code) { bytes += $0 }
        withUnsafeBytes(of: value) { bytes += $0 }
        return bytes
    }

    /// Down, hold, up, timed on a thread of its own: a Task.sleep can overshoot by seconds when
    /// other tests keep the cooperative pool busy, and would turn a short press into a long one.
    static func press(_ fd: Int32, holding: Duration) async throws {
        let microseconds = UInt32(holding.components.seconds * 1_000_000 + holding.components.attoseconds / 1_000_000_000_000)
        try await offPool {
            let down = key(28, 1), up = key(28, 0)
            _ = down.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            usleep(microseconds)
            _ = up.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
    }

    @Test func shortStartsLongStops() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        let fifo = daemon.directory.file("buttons")
        try #require(mkfifo(fifo, 0o600) == 0)
        // Held open for reading and writing so that the daemon's reader never sees an end of file.
        let fd = open(fifo, O_RDWR | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        try daemon.writeConfig("[buttons]\ndevice = \"\(fifo)\"\nkeys = [28]\nlong_press_s = 1\nvery_long_press_s = 4")
        try await daemon.start()
        // The FIFO gives no kernel timestamps: events are timed when read, so press only once
        // the reader is there (two records read at once would be a 0 ms blip).
        _ = try await LifecycleTests.waitFor(in: daemon, "reading buttons from")

        // Holds well clear of the thresholds (1 s, 4 s): events are timed when read, and a loaded
        // machine reads them late.
        try await Self.press(fd, holding: .milliseconds(300))
        try await daemon.waitForStatus(timeout: .seconds(10)) { $0["state"] as? String == "waiting_for_fix" }
        // A key that is not the run button does nothing.
        _ = Self.key(30, 1).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        _ = Self.key(30, 0).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        try await Self.press(fd, holding: .milliseconds(2200))
        try await daemon.waitForStatus(timeout: .seconds(10)) { $0["state"] as? String == "idle" }
        #expect(daemon.stderr.contains("run stopped before any GPS fix"))
        // Held past the very long threshold: an SOS, which neither starts nor stops a run.
        try await Self.press(fd, holding: .milliseconds(5000))
        #expect(daemon.stderr.contains("very long press on key 28"))
        #expect(daemon.stderr.contains("SOS requested (button)"))
        // Raised by the lane from its own reading of the key; the pipeline no longer raises too.
        #expect(daemon.stderr.components(separatedBy: "SOS requested (button)").count == 2, "one raise, not two")
        let sos = try await daemon.ctl("sos", "status", "--json")
        let open = (try JSONSerialization.jsonObject(with: Data(sos.stdout.utf8)) as? [String: Any])?["open_alerts"] as? [Any]
        #expect(open?.count == 1, "\(sos.stdout)")
        #expect(try await daemon.status()["state"] as? String == "idle")
        #expect(await daemon.stop() == .exited(0))
    }
}
