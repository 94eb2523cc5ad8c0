import FoundationEssentials
import PacerContract
import PacerCore

/// `pacerctl plan`: the plan in use, each session with its date, name and steps, which is today
/// and which a run followed already. pacerd answers it over the control socket; pacerctl makes
/// the same from the state directory when pacerd is down.
public struct PlanListing: Codable, Equatable, Sendable {
    public enum State: String, Codable, Sendable {
        /// A plan is in use (it may be empty).
        case plan
        case noneFetched = "none_fetched"
        case notLinked = "not_linked"
    }

    public struct Entry: Codable, Equatable, Sendable {
        public var id: String
        public var date: String
        public var name: String
        /// The steps in short ("800 m warmup, 6 × (400 m run at 3:10-3:30/km, 200 m recover)").
        public var steps: String?
        public var today: Bool
        /// The session a start takes today (`WhatAStartStarts`).
        public var next: Bool
        /// A stored run followed it.
        public var done: Bool
        /// Its workout file; nil when the device cannot run it.
        public var file: String?
        /// Why the device cannot run it.
        public var problem: String?
    }

    public var state: State
    public var timezone: String?
    public var today: String?
    public var fetched_at: String?
    /// Whether the sync channel is on (`[upload] url`, `[upload] sync`).
    public var sync: Bool
    public var sessions: [Entry]

    /// From the last sync kept beside `storePath`. `followed` says which session ids a stored run
    /// followed.
    public static func make(storePath: String, syncOn: Bool, nowMs: Int64,
                            followed: ([String]) -> Set<String>) throws -> PlanListing {
        guard let (sync, fetchedAt) = try CloudSync.lastSync(storePath: storePath).map({ ($0.sync, $0.fetchedAt) }) else {
            return PlanListing(state: .noneFetched, sync: syncOn, sessions: [])
        }
        if sync.sections.profile?.linked == false {
            return PlanListing(state: .notLinked, fetched_at: fetchedAt, sync: syncOn, sessions: [])
        }
        let plan = sync.sections.plan.map(DevicePlan.init)
        let timezone = plan?.timezone ?? "UTC"
        let today = PlanCalendar.localDate(epochMs: nowMs, timezone: timezone)
        let files = PlanFiles(storePath: storePath)
        let done = followed(plan?.sessions.map(\.id) ?? [])
        let next = plan?.today(today, followed: done).next?.id
        let entries = (plan?.sessions ?? []).map { session in
            Entry(id: session.id, date: session.date, name: session.name, steps: session.workout.map(Self.steps),
                  today: session.date == today, next: session.id == next, done: done.contains(session.id),
                  file: files.path(of: session), problem: session.problem)
        }
        return PlanListing(state: .plan, timezone: timezone, today: today, fetched_at: fetchedAt, sync: syncOn, sessions: entries)
    }

    /// What `pacerctl plan` prints.
    public var text: String {
        let off = sync ? "" : " The sync channel is off (no [upload] url, or [upload] sync = false)."
        switch state {
        case .noneFetched:
            return "No plan fetched yet: pacerd fetches it from the cloud once the device is linked (pacerctl cloud link).\(off)"
        case .notLinked:
            return "Linked to no account: the cloud has no plan for this device (pacerctl cloud link links it).\(off)"
        case .plan:
            var lines = ["Plan in \(timezone ?? "UTC"), today \(today ?? "?")" + (fetched_at.map { ", fetched \($0)" } ?? "") + "." + off]
            if sessions.isEmpty { lines.append("Nothing planned for the next \(PlanSection.days) days.") }
            for entry in sessions {
                let mark = entry.next ? "today, next" : entry.today ? "today" : ""
                var line = "\(entry.date)  \(mark.padding(11))  \(entry.name)"
                if entry.done { line += " (run)" }
                if let steps = entry.steps { line += ": \(steps)" }
                if let problem = entry.problem { line += ": skipped, the device cannot run it (\(problem))" }
                lines.append(line)
            }
            if let file = sessions.first(where: \.next)?.file {
                lines.append("A short press or pacerctl run start --planned starts today's next session (\(file)).")
            }
            return lines.joined(separator: "\n")
        }
    }

    /// "800 m warmup at 5:00-6:00/km, 6 × (400 m run at 3:10-3:30/km, 200 m recover), 200 m cooldown".
    public static func steps(_ workout: Workout) -> String {
        workout.items.map { item in
            switch item {
            case .step(let single): return describe(single)
            case .repeated(let times, let block): return "\(times) × (" + block.map(describe).joined(separator: ", ") + ")"
            }
        }.joined(separator: ", ")
    }

    private static func describe(_ step: WorkoutStep) -> String {
        let length = switch step.end {
        case .distance(let meters): meters >= 1000 && meters.truncatingRemainder(dividingBy: 100) == 0
            ? "\(trimmed(meters / 1000)) km" : "\(trimmed(meters)) m"
        case .time(let seconds): seconds >= 60 && seconds.truncatingRemainder(dividingBy: 60) == 0
            ? "\(trimmed(seconds / 60)) min" : "\(trimmed(seconds)) s"
        case .lapButton: "until lap"
        }
        let target = switch step.target {
        case .pace(let fastest, let slowest)?: " at \(pace(fastest))-\(pace(slowest))/km"
        case .heartRateZone(let zone)?: " in zone \(zone)"
        case .heartRate(let low, let high)?: " at \(low)-\(high) bpm"
        case nil: ""
        }
        return "\(length) \(step.kind.rawValue)\(target)"
    }

    private static func trimmed(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String((value * 10).rounded() / 10)
    }

    private static func pace(_ secondsPerKm: Double) -> String {
        let whole = Int(secondsPerKm.rounded())
        return "\(whole / 60):\(whole % 60 < 10 ? "0" : "")\(whole % 60)"
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
