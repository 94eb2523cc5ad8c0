#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import PacerConfig
import PacerContract
import PacerCore
import PacerSession

/// The `plan` section as the device uses it: each session checked and turned into the core's
/// `Workout`, or set aside with the reason (the field, as `PlanStepError` names it), so one bad
/// session never costs the others.
public struct DevicePlan: Sendable, Equatable {
    public struct Session: Sendable, Equatable {
        public var id: String
        /// `YYYY-MM-DD` in the plan's timezone.
        public var date: String
        public var name: String
        /// nil: the device cannot run it (`problem` says why).
        public var workout: Workout?
        public var problem: String?

        /// The workout file's name in the plan directory ("2026-11-26-<id>.toml"); nil when skipped.
        public var fileName: String? { workout == nil ? nil : "\(date)-\(id).toml" }
    }

    public var version: String
    /// The IANA zone the dates are in; "UTC" when the cloud's is unknown here.
    public var timezone: String
    /// In the cloud's order (by date), at most `PlanSection.maxSessions`.
    public var sessions: [Session]
    /// What was wrong with the section as a whole (an unknown timezone), for the journal.
    public var problems: [String] = []

    public init(_ section: PlanSection) {
        version = section.version
        if ZoneFile.offsets(named: section.timezone) != nil {
            timezone = section.timezone
        } else {
            timezone = "UTC"
            problems.append("plan: timezone \"\(section.timezone)\" is not known here; the plan's dates are taken as UTC dates")
        }
        sessions = section.sessions.prefix(PlanSection.maxSessions).enumerated().map { index, planned in
            var session = Session(id: planned.id, date: planned.date, name: NoticeText.clean(planned.name), workout: nil, problem: nil)
            do throws(PlanStepError) {
                // The id and date become a file name: nothing but a UUID and a date may get there.
                guard WireLimits.isLowercaseUUID(planned.id) else { throw PlanStepError(field: "sessions[\(index)].id", problem: "not a lowercase UUID") }
                guard PlanCalendar.isDate(planned.date) else { throw PlanStepError(field: "sessions[\(index)].date", problem: "not a date (YYYY-MM-DD)") }
                guard (1...PlanSteps.maxNameLength).contains(session.name.count) else {
                    throw PlanStepError(field: "sessions[\(index)].name", problem: "1 to \(PlanSteps.maxNameLength) characters")
                }
                let workout = try PlanSteps.workout(name: session.name, steps: planned.steps, field: "sessions[\(index)].steps")
                // What cannot be a workout file cannot be replayed as the run's workout either.
                do throws(WorkoutWriteError) {
                    _ = try WorkoutFile.text(of: workout)
                } catch {
                    throw PlanStepError(field: "sessions[\(index)].steps (\(error.field))", problem: error.problem)
                }
                session.workout = workout
            } catch {
                session.problem = error.description
            }
            return session
        }
    }

    /// The plan as the run session decides with it (`WhatAStartStarts`): the sessions the device
    /// can run, `today` in the plan's timezone, and those a stored run followed.
    public func today(_ today: String, followed: Set<String>) -> PlanToday {
        PlanToday(sessions: sessions.compactMap { session in session.workout.map { PlannedRun(id: session.id, date: session.date, workout: $0) } },
                  today: today, followed: followed)
    }
}

/// Local dates for the plan: "today" in its timezone. The offset in force comes from the
/// system's zone data (`ZoneFile`); the calendar is the core's `LocalDate`, so midnight in any zone is exact.
public enum PlanCalendar {
    /// `YYYY-MM-DD` of the instant `epochMs` in `timezone` (unknown zones count as UTC).
    public static func localDate(epochMs: Int64, timezone: String) -> String {
        let zone = ZoneFile.offsets(named: timezone) ?? .utc
        return LocalDate(containing: Timestamp(milliseconds: epochMs)) { zone.secondsFromUTC(at: $0) }.description
    }

    /// `YYYY-MM-DD`, digits only, a date that exists.
    public static func isDate(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == 0x2D, bytes[7] == 0x2D,
              bytes.enumerated().allSatisfy({ $0.offset == 4 || $0.offset == 7 || (0x30...0x39).contains($0.element) }),
              let year = Int(text.prefix(4)), let month = Int(text.dropFirst(5).prefix(2)), let day = Int(text.suffix(2))
        else { return false }
        return LocalDate(year: year, month: month, day: day) != nil
    }
}

/// The plan's sessions as workout files in `<state directory>/plan/` (`<date>-<id>.toml`), so
/// `pacerctl replay --workout` and `pacerctl run start --workout` read them like any other. The
/// directory mirrors the plan in use: files of sessions no longer planned are removed; other
/// files there are left alone.
public struct PlanFiles: Sendable {
    public let directory: String

    /// `plan` in the directory of `storePath`.
    public init(storePath: String) {
        directory = SyncFile(beside: storePath, name: "plan").path
    }

    public func path(of session: DevicePlan.Session) -> String? { session.fileName.map { directory + "/" + $0 } }

    /// Writes the plan's files (only those whose content changed) and removes those of sessions
    /// no longer in it; nil plan: none left. Returns what the journal should hear.
    @discardableResult
    public func write(_ plan: DevicePlan?) -> [(SyncLogLevel, String)] {
        var notes: [(SyncLogLevel, String)] = []
        var keep: Set<String> = []
        if plan != nil, mkdir(directory, 0o755) != 0, errno != EEXIST {
            return [(.error, "plan: cannot create \(directory): \(String(cString: strerror(errno))); the plan is used from memory only")]
        }
        for session in plan?.sessions ?? [] {
            guard let workout = session.workout, let name = session.fileName else {
                notes.append((.warning, "plan: session \"\(session.name)\" on \(session.date) (\(session.id)) is skipped: \(session.problem ?? "?")"))
                continue
            }
            keep.insert(name)
            let header = ["Planned session \(session.id) on \(session.date), from the cloud's training plan.",
                          "Written by pacerd; replaced or removed when the plan changes."]
            guard let text = try? WorkoutFile.text(of: workout, header: header) else { continue }
            let file = SyncFile(path: directory + "/" + name, mode: 0o644)
            if (try? file.read()) == Array(text.utf8) { continue }
            do { try file.write(Array(text.utf8)) } catch {
                notes.append((.error, "plan: cannot write the workout file of \"\(session.name)\": \(error)"))
            }
        }
        for name in Self.planFileNames(in: directory) where !keep.contains(name) {
            if unlink(directory + "/" + name) != 0, errno != ENOENT {
                notes.append((.warning, "plan: cannot remove \(directory)/\(name): \(String(cString: strerror(errno)))"))
            }
        }
        return notes
    }

    /// The files this keeper wrote: `YYYY-MM-DD-<uuid>.toml`.
    static func planFileNames(in directory: String) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.filter { name in
            name.utf8.count == 10 + 1 + 36 + 5 && name.hasSuffix(".toml") && PlanCalendar.isDate(String(name.prefix(10)))
                && WireLimits.isLowercaseUUID(String(name.dropFirst(11).prefix(36)))
        }.sorted()
    }
}

extension CloudSync {
    /// `name` in pacerd's state directory, the directory of `storePath`.
    public static func stateFilePath(beside storePath: String, name: String) -> String {
        SyncFile(beside: storePath, name: name).path
    }

    /// The last sync pacerd fetched (`cloud-sync.json` beside the store) and when; nil when none
    /// was fetched yet. For readers other than pacerd (`pacerctl plan` while pacerd is down).
    public static func lastSync(storePath: String) throws -> (sync: DeviceSync, fetchedAt: String)? {
        guard let bytes = try SyncFile(beside: storePath, name: "cloud-sync.json").read() else { return nil }
        let cache = try JSONDecoder().decode(SyncCache.self, from: Data(bytes))
        return (cache.sync, cache.fetched_at)
    }
}
