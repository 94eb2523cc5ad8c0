import Foundation
import PacerCore
import PacerTestSupport
import Store
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The store on a tiny tmpfs that fills up mid-run: pacerd says so (journal, STATUS, status),
/// keeps running the pipeline, and when space returns writes everything it held: nothing lost.
@Suite(.serialized, .timeLimit(.minutes(10))) struct DiskFullTests {
    /// Mounting needs root (CAP_SYS_ADMIN); elsewhere the test is skipped, saying why.
    static let canMount: Bool = {
        guard geteuid() == 0 else { return false }
        let probe = NSTemporaryDirectory() + "pacer-mount-probe-\(getpid())"
        mkdir(probe, 0o700)
        defer { rmdir(probe) }
        guard mount("tmpfs", probe, "tmpfs", 0, "size=64k") == 0 else { return false }
        umount(probe)
        return true
    }()

    @Test(.enabled(if: DaemonFixture.hasSharedData && canMount, "needs ../shared/data and root to mount a tmpfs"))
    func aFullDiskStopsRecordingLoudlyAndLosesNothing() async throws {
        let fake = try GPSFake(log: DaemonFixture.sharedData + "/sim/hairpins-1.nmea", options: .init(cycle: 0.004, holdUntilReleased: true))
        try await fake.start()
        defer { Task { await fake.stop() } }
        let daemon = try DaemonFixture(gpsPort: fake.port)
        defer { daemon.cleanUp() }

        // The store alone on an 8 MiB file system (room for SQLite's WAL, which grows to 4 MB before it is reused), most of it taken by a filler file.
        let mountPoint = daemon.directory.file("small")
        mkdir(mountPoint, 0o755)
        try #require(mount("tmpfs", mountPoint, "tmpfs", 0, "size=8m") == 0)
        defer { umount2(mountPoint, Int32(MNT_DETACH)) }
        try """
            [gps]
            host = "127.0.0.1"
            port = \(fake.port)
            [storage]
            path = "\(mountPoint)/pacer.db"
            [control]
            socket = "\(daemon.socketPath)"
            group = "root"
            """.write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        try await daemon.start()
        let filler = mountPoint + "/filler"
        let free = Self.freeBytes(mountPoint)
        try Data(count: max(0, free - 24 * 1024)).write(to: URL(fileURLWithPath: filler))

        try await daemon.waitForStatus { $0["gps"] as? String == "no_fix" }
        #expect(try await daemon.ctl("run", "start").status == 0)
        fake.release()
        let full = try await daemon.waitForStatus(timeout: .seconds(60)) { $0["store_problem"] is String }
        let problem = try #require(full["store_problem"] as? String)
        #expect(problem.contains("full"), "\(problem)")
        #expect(await daemon.notify.wait(timeout: .seconds(5)) { $0.hasPrefix("STATUS=") && $0.contains("NOT SAVING") } != nil)
        #expect(daemon.stderr.contains("<3>saving the run failed: ") || daemon.stderr.contains("<3>starting the run failed: "))
        // The pipeline runs on: the distance keeps growing while nothing can be written.
        let before = full["distance_m"] as? Double ?? 0
        try await daemon.waitForStatus { ($0["distance_m"] as? Double ?? 0) > before + 100 }

        // Space returns: recording resumes by itself.
        try FileManager.default.removeItem(atPath: filler)
        try await daemon.waitForStatus { $0["store_problem"] is NSNull }
        #expect(daemon.stderr.contains("recording resumed with nothing lost"))
        try await daemon.waitForStatus(timeout: .seconds(120)) { $0["gps"] as? String == "gpsd_unreachable" }
        let stop = try await daemon.ctl("run", "stop")
        #expect(stop.status == 0, "\(stop.stderr)\n\(daemon.stderr)")

        // Nothing was lost: every fix gpsd made of the log is in the stored raw lines.
        let raw = daemon.directory.file("raw.jsonl")
        let export = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["runs", "export", "1", "--format", "gpsd", "-o", raw, "--db", mountPoint + "/pacer.db"])
        #expect(export.status == 0, "\(export.stderr)")
        let reference = DaemonFixture.sharedData + "/sim/hairpins-1.gpsd.jsonl"
        #expect(try LiveEqualsReplayTests.fixTimes(raw) == LiveEqualsReplayTests.fixTimes(reference))
        let store = try RunStore(path: mountPoint + "/pacer.db", readOnly: true)
        #expect(try store.integrityCheck() == "ok")
        #expect(try store.run(1)?.state == .finished, "\(daemon.stderr)")
        #expect(await daemon.stop() == .exited(0))
    }

    static func freeBytes(_ path: String) -> Int {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }
}
