import Foundation
import PacerCore
import PacerTestSupport
import Store
import Testing

/// A run played through real gpsd (gpsfake) into pacerd, stopped, then its recorded raw lines
/// replayed by `pacerctl replay --record`: the two stored runs must be identical.
@Suite(.serialized, .timeLimit(.minutes(10))) struct LiveEqualsReplayTests {
    static let route = "hairpins-1"

    @Test(.enabled(if: DaemonFixture.hasSharedData))
    func liveRunEqualsTheReplayOfItsRawLines() async throws {
        // Held until released: pacerd watches before the first sentence is played.
        let fake = try GPSFake(log: DaemonFixture.sharedData + "/sim/\(Self.route).nmea",
                               options: .init(cycle: 0.002, holdUntilReleased: true))
        try await fake.start()
        let daemon = try DaemonFixture(gpsPort: fake.port)
        defer { daemon.cleanUp() }
        try await daemon.start()
        print("LiveEqualsReplayTests: READY=1 \(daemon.readyLatency) after spawn")
        try await daemon.waitForStatus { $0["gps"] as? String == "no_fix" }

        let start = try await daemon.ctl("run", "start")
        #expect(start.status == 0, "\(start.stderr)")
        #expect(start.stdout.contains("Run started, waiting for a GPS fix"))
        fake.release()
        try await daemon.waitForStatus { ($0["distance_m"] as? Double ?? 0) > 1000 }
        #expect(try await daemon.ctl("run", "lap").status == 0)
        // gpsfake -1 ends with the log; gpsd goes with it and pacerd sees the connection close.
        try await daemon.waitForStatus(timeout: .seconds(120)) { $0["gps"] as? String == "gpsd_unreachable" }
        let stop = try await daemon.ctl("run", "stop", "--json")
        #expect(stop.status == 0, "\(stop.stderr)")
        #expect(daemon.notify.statusLines.contains { $0.hasPrefix("Recording run 1: ") && $0.contains(", GPS 3D fix") })

        // Every epoch gpsd made of the log was recorded (the reference is the same NMEA through gpsd).
        let raw = daemon.directory.file("raw.gpsd.jsonl")
        let export = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["runs", "export", "1", "--format", "gpsd", "-o", raw, "--db", daemon.databasePath])
        #expect(export.status == 0, "\(export.stderr)")
        let reference = DaemonFixture.sharedData + "/sim/\(Self.route).gpsd.jsonl"
        #expect(try Self.fixTimes(raw) == Self.fixTimes(reference))

        // The replay of those lines, recorded into a second store, is the same run.
        let replayDB = daemon.directory.file("replay.db")
        let replay = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["replay", "--gps", raw, "--record", replayDB])
        #expect(replay.status == 0, "\(replay.stderr)")
        let live = try RunStore(path: daemon.databasePath, readOnly: true)
        let replayed = try RunStore(path: replayDB, readOnly: true)
        let liveDetail = try live.detail(1), replayDetail = try replayed.detail(1)
        let liveTrack = try live.track(1), replayTrack = try replayed.track(1)
        #expect(liveTrack.samples.count > 800)
        #expect(liveTrack.samples == replayTrack.samples)
        #expect(liveDetail.splits == replayDetail.splits)
        #expect(liveDetail.laps.count == 2)  // the runner's and the closing one
        #expect(liveDetail.laps == replayDetail.laps)
        #expect(liveDetail.run.distance == replayDetail.run.distance)
        #expect(liveDetail.run.movingTime == replayDetail.run.movingTime)
        #expect(liveDetail.run.state == .finished)

        #expect(await daemon.stop() == .exited(0))
        #expect(daemon.notify.assignments.contains { $0.line == "STOPPING=1" })
        await fake.stop()
    }

    /// The times of the TPVs with a fix, in order.
    static func fixTimes(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: \.isNewline).compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["class"] as? String == "TPV", (object["mode"] as? Int ?? 0) >= 2 else { return nil }
            return object["time"] as? String
        }
    }
}
