import Foundation
import PacerCore
import PacerTestSupport

/// Where in park-3k each event of the scenario happens, by epoch (receiver second), worked out
/// from what `pacerctl replay` decides for the log pacerd will be given, so that nothing the test
/// does lands on a step announcement (an SOS cue would cut it off, as it should).
struct RunPlan: Sendable {
    /// The step announcements pacerd will make, with the epoch whose fix makes each.
    var steps: [(epoch: Int, text: String)]
    /// The strap reports a heart rate above the limit (middle of the warm-up).
    var sos: Int
    /// The strap's link drops (middle of the first interval).
    var strapDrop: Int
    /// The last epoch the first gpsd plays; the next `gap` epochs are lost while it restarts
    /// (middle of the cool-down).
    var restartAfter: Int
    var partA: Range<Int>
    var partB: Range<Int>
    /// The cloud goes away once the workout is complete, while the run finishes.
    var cloudDown: Int

    /// Epochs a planned event keeps from every step announcement and GPS cue, and a step from
    /// every GPS cue.
    static let clearance = 20

    static func make(log: NMEAEpochs, workout: String, gap: Int, directory: TemporaryDirectory) async throws -> RunPlan {
        func stepEpochs(_ cues: [ReplayCue]) throws -> [(epoch: Int, text: String)] {
            try cues.filter { $0.kind == "step" }.map { cue in
                guard let epoch = log.epoch(atOrAfter: cue.time) else { throw FixtureError("a step after the log's end: \(cue)") }
                return (epoch, cue.text)
            }
        }
        // Where the steps fall on the whole log places the restart; the log without the epochs
        // the restart loses then says where everything after it falls.
        let whole = try stepEpochs(try await ReplayCue.decided(gpsd: EndToEndWorld.parkGPSD, workout: workout))
        guard whole.count == EndToEndWorld.stepAnnouncements else {
            throw FixtureError("the workout makes \(whole.count) step announcements on park-3k, not \(EndToEndWorld.stepAnnouncements): \(whole)")
        }
        let restartAfter = (whole[whole.count - 2].epoch + whole[whole.count - 1].epoch) / 2
        let partA = 0..<(restartAfter + 1)
        let partB = (restartAfter + 1 + gap)..<log.count
        let withGap = directory.file("planned.gpsd.jsonl")
        try ReplayCue.writeLog(EndToEndWorld.parkGPSD, to: withGap, without: log.times[partA.upperBound]..<log.times[partB.lowerBound])
        let cues = try await ReplayCue.decided(gpsd: withGap, workout: workout)
        let steps = try stepEpochs(cues)
        guard steps.count == EndToEndWorld.stepAnnouncements else { throw FixtureError("with the restart's gap: \(steps)") }

        let plan = RunPlan(
            steps: steps, sos: (steps[0].epoch + steps[1].epoch) / 2, strapDrop: (steps[1].epoch + steps[2].epoch) / 2,
            restartAfter: restartAfter, partA: partA, partB: partB, cloudDown: steps[steps.count - 1].epoch)
        // Nothing planned may come near a spoken step, nor a step near the log's own GPS outage
        // (the restart's own GPS cues aside): their cues would meet, and a safety or SOS cue
        // cuts a step's announcement off.
        let restart = plan.restartAfter...(plan.partB.lowerBound + clearance)
        let gpsCues = cues.filter { $0.kind.hasPrefix("gps_") }.compactMap { log.epoch(atOrAfter: $0.time) }.filter { !restart.contains($0) }
        for (event, others) in [plan.sos, plan.strapDrop, plan.restartAfter].map({ ($0, steps.map(\.epoch) + gpsCues) })
            + steps.map({ ($0.epoch, gpsCues) }) where others.contains(where: { abs($0 - event) < clearance }) {
            throw FixtureError("epoch \(event) is within \(clearance) epochs of a cue at \(others)")
        }
        return plan
    }
}
