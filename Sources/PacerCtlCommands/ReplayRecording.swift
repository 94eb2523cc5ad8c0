import FoundationEssentials
import PacerCore
import PacerReplay
import Recording
import Store

#if canImport(Glibc)
import Glibc
#endif

/// `pacerctl replay --record DB`: runs the core over a log and records the run into a store the
/// way the daemon does (raw lines, samples, heart rate, durable batches), optionally paced in
/// real time so it can be killed mid-run by crash tests.
enum ReplayRecording {
    static func record(
        _ inputs: ReplayInputs, configuration: TrackerConfiguration, coach: Coach?, into path: String, pace: Double?, progress: Bool
    ) throws -> ReplayReport {
        let store = try RunStore(path: path)
        for id in try store.recoverInterruptedRuns() {
            printError("pacerctl: run \(id) was interrupted; its data up to the last durable batch is kept")
        }
        var recording = RunRecording(store: store, configuration: configuration, coach: coach)
        var report = ReplayReport(stats: inputs.stats)
        var paceOrigin: (run: Timestamp, wall: ContinuousClock.Instant)?
        let clock = ContinuousClock()

        for item in inputs.items {
            let events = try recording.ingest(item)
            report.record(events)
            report.cues += recording.takeCues()
            let itemTime: Timestamp? = switch item {
            case .fix: events.lazy.compactMap { if case .sample(let s) = $0 { s.time } else { nil } }.first
            case .heartRate(let reading): reading.time
            case .rawLine, .control: nil
            }
            try recording.commitIfDue()
            if let time = itemTime, let runStart = recording.runStart {
                // stderr is unbuffered: a crash test reads how far the run got right up to the kill.
                if progress { printError("t \(time.milliseconds - runStart.milliseconds)") }
                if let pace {
                    let origin = paceOrigin ?? (time, clock.now)
                    paceOrigin = origin
                    let due = origin.wall + .milliseconds(Int64(Double(time.milliseconds - origin.run.milliseconds) / pace))
                    if due > clock.now { Thread.sleep(until: due) }
                }
            }
        }
        report.record(try recording.finish())
        report.cues += recording.takeCues()
        report.summary = recording.summary
        report.counts = recording.counts
        report.recordedRunID = recording.runID
        return report
    }
}

private enum Thread {
    static func sleep(until instant: ContinuousClock.Instant) {
        let remaining = instant - ContinuousClock().now
        let c = remaining.components
        guard c.seconds >= 0, remaining > .zero else { return }
        var request = timespec(tv_sec: Int(c.seconds), tv_nsec: Int(c.attoseconds / 1_000_000_000))
        var rest = timespec()
        while nanosleep(&request, &rest) != 0 { request = rest }
    }
}
