import Foundation
import PacerCore
import Testing
@testable import PacerReplay

/// Real receivers' logs replayed through gpsd 3.22 (../shared/data/gpsd-logs/gpspipe-3.22): each
/// shows one trap of real data, and the pipeline must handle all of them without a crash.
@Suite(.enabled(if: SharedData.isAvailable, "needs ../shared/data beside the repository"), .timeLimit(.minutes(10)))
struct RecordedReceiverLogTests {
    func replay(_ name: String) throws -> ReplayReport {
        let inputs = try ReplayLoader.load(gpsPath: SharedData.path("gpsd-logs/gpspipe-3.22/\(name).gpspipe.json"), heartRatePath: nil)
        return Replay.run(inputs, configuration: TrackerConfiguration())
    }

    @Test func everyCaptureReplays() throws {
        let directory = SharedData.path("gpsd-logs/gpspipe-3.22")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".gpspipe.json") }
        #expect(names.count >= 15)
        for name in names {
            let report = try replay(String(name.dropLast(".gpspipe.json".count)))
            #expect(report.summary.distance.isFinite, "\(name)")
            #expect(report.samples.count == report.counts.accepted, "\(name)")
        }
    }

    @Test func demoModeReceiverRecordsNothing() throws {
        let report = try replay("garmin-geko201.log")
        #expect(report.counts.accepted == 0)
        #expect(report.counts.count(.simulated) + report.counts.count(.noTime) + report.counts.count(.noFix) > 0)
    }

    @Test func ggaOnlyReceiverIsSkippedWithAWarning() throws {
        let report = try replay("adddate.nmea")
        #expect(report.counts.accepted == 0)
        #expect(report.counts.count(.noTime) > 400)
        #expect(report.warnings.map(\.kind).contains("gps_no_time"))
    }

    @Test func manyTPVsPerEpochAreDeduplicated() throws {
        let report = try replay("bundg_zeus_9.log")
        #expect(report.counts.accepted <= 148)
        #expect(report.counts.count(.duplicate) > 2000)
    }

    @Test(arguments: ["ublox-neo-m9n-nmea.log", "quectel-l76k-nmea.log", "mt3339.log", "telit-he910.log"])
    func stationaryReceiversDoNotRun(_ name: String) throws {
        // Jitter paths of metres (3.7 m on the u-blox) must not become distance.
        let report = try replay(name)
        #expect(report.counts.accepted > 20)
        #expect(report.summary.distance < 5)
    }

    @Test func fixLostAndRegainedIsNotAnError() throws {
        let report = try replay("telit-he910.log")
        #expect(report.counts.count(.noFix) > 0)
        #expect(report.counts.accepted > 150)
    }
}
