import Foundation
import PacerCore
import Testing
@testable import PacerReplay

/// Real gpsd 3.22 output of the simulated routes, checked against their ground truth with looser
/// bounds than tools/bench-accuracy's targets: this guards against regressions, the bench measures.
@Suite(.enabled(if: SharedData.isAvailable, "needs ../shared/data beside the repository"), .timeLimit(.minutes(10)))
struct RouteRegressionTests {
    struct Truth: Decodable {
        struct Sample: Decodable {
            var s: Double
            var fix: Bool
            var moving: Bool
            var t: Double
        }
        var samples: [Sample]
    }

    func replay(_ route: String) throws -> (ReplayReport, distance: Double, moving: Double) {
        let inputs = try ReplayLoader.load(gpsPath: SharedData.path("sim/\(route).gpsd.jsonl"), heartRatePath: nil)
        let report = Replay.run(inputs, configuration: TrackerConfiguration())
        let data = try Data(contentsOf: URL(fileURLWithPath: SharedData.path("sim/\(route).truth.json")))
        let truth = try JSONDecoder().decode(Truth.self, from: data)
        let fixes = truth.samples.indices.filter { truth.samples[$0].fix }
        let first = fixes.first!, last = fixes.last!
        var moving = 0.0
        for i in (first + 1)...last where truth.samples[i].moving {
            moving += truth.samples[i].t - truth.samples[i - 1].t
        }
        return (report, truth.samples[last].s - truth.samples[first].s, moving)
    }

    @Test func cityLoopWithDoppler() throws {
        let (report, distance, moving) = try replay("city-10k-1")
        #expect(abs(report.summary.distance - distance) / distance < 0.01)
        #expect(abs(report.summary.movingTime - moving) / moving < 0.03)
        // Ten full kilometres; the ~5 m after the last boundary are too short to be a split.
        #expect(report.splits.map(\.distance) == Array(repeating: 1000, count: 10))
        #expect(report.counts.bridgedGaps >= 2)  // two underpasses
    }

    @Test func cityLoopWithoutDoppler() throws {
        let (report, distance, _) = try replay("city-10k-1-nosog")
        #expect(abs(report.summary.distance - distance) / distance < 0.03)
    }

    @Test func standingStillTenMinutes() throws {
        let (report, _, _) = try replay("standstill-1")
        #expect(report.summary.distance < 10)
        #expect(report.summary.movingTime < 10)
    }
}
