import FoundationEssentials
import PacerCore
import PacerReplay
import Store

#if canImport(Glibc)
import Glibc
#endif

/// `pacerctl replay --record DB`: runs the core over a log and records the run into a store the
/// way the daemon does (raw lines, samples, heart rate, durable batches), optionally paced in
/// real time so it can be killed mid-run by crash tests.
enum ReplayRecording {
    static func record(
        _ inputs: ReplayInputs, configuration: TrackerConfiguration, into path: String, pace: Double?, progress: Bool
    ) throws -> ReplayReport {
        let store = try RunStore(path: path)
        for id in try store.recoverInterruptedRuns() {
            printError("pacerctl: run \(id) was interrupted; its data up to the last durable batch is kept")
        }
        var session = ReplaySession(inputs: inputs, configuration: configuration)
        var recorder: RunRecorder?
        var pendingLines: [String] = []
        var paceOrigin: (run: Timestamp, wall: ContinuousClock.Instant)?
        let clock = ContinuousClock()

        for item in inputs.items {
            let events: [TrackerEvent]
            var itemTime: Timestamp?
            switch item {
            case .rawLine(let line):
                // Lines wait for the run to exist (the first fix or HR reading starts it).
                if recorder != nil { recorder!.record(rawLine: line, at: nil) } else { pendingLines.append(line) }
                continue
            case .fix:
                events = session.ingest(item)
                itemTime = events.lazy.compactMap { if case .sample(let s) = $0 { s.time } else { nil } }.first
            case .heartRate(let reading):
                events = session.ingest(item)
                itemTime = reading.time
            }
            if recorder == nil, let start = itemTime {
                recorder = try RunRecorder(store: store, uuid: UUID().uuidString.lowercased(), startTime: start)
                for line in pendingLines { recorder!.record(rawLine: line, at: nil) }
                pendingLines = []
            }
            guard var active = recorder else { continue }
            if case .heartRate(let reading) = item { active.record(reading) }
            active.record(events)
            try active.flushIfDue()
            recorder = active
            if let time = itemTime {
                // stderr is unbuffered: a crash test reads how far the run got right up to the kill.
                if progress { printError("t \(time.milliseconds - active.runStart.milliseconds)") }
                if let pace {
                    let origin = paceOrigin ?? (time, clock.now)
                    paceOrigin = origin
                    let due = origin.wall + .milliseconds(Int64(Double(time.milliseconds - origin.run.milliseconds) / pace))
                    if due > clock.now { Thread.sleep(until: due) }
                }
            }
        }
        var (finalEvents, report) = session.finish()
        if var active = recorder {
            active.record(finalEvents)
            try active.finish(summary: report.summary)
            report.recordedRunID = active.runID
        }
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
