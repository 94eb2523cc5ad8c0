import PacerCore

/// A session of the training plan as the run session knows it (the cloud's `plan` section,
/// checked by the sync side): its id, its local date and its workout.
public struct PlannedRun: Sendable, Equatable {
    public var id: String
    /// `YYYY-MM-DD` in the plan's timezone.
    public var date: String
    public var workout: Workout

    public init(id: String, date: String, workout: Workout) {
        self.id = id
        self.date = date
        self.workout = workout
    }
}

/// The plan as of now: its sessions, today's date in the plan's timezone (the shell works it out
/// from the wall clock and the zone, and sends it again when the date changes), and the sessions
/// a stored run already followed.
public struct PlanToday: Sendable, Equatable {
    public var sessions: [PlannedRun]
    /// nil: no plan (none fetched, or the device belongs to no account).
    public var today: String?
    public var followed: Set<String>

    public init(sessions: [PlannedRun], today: String?, followed: Set<String> = []) {
        self.sessions = sessions
        self.today = today
        self.followed = followed
    }

    public static let none = PlanToday(sessions: [], today: nil)

    /// Today's sessions, in plan order.
    public var todays: [PlannedRun] { today.map { day in sessions.filter { $0.date == day } } ?? [] }

    /// The session a start takes today: the first of today's that no run followed yet.
    public var next: PlannedRun? { todays.first { !followed.contains($0.id) } }
}

/// How a run was asked for.
public enum StartRequest: Sendable, Equatable {
    /// `pacerctl run start --workout FILE`.
    case workout(Workout)
    /// `pacerctl run start --planned`.
    case planned
    /// A plain `pacerctl run start`.
    case free
    /// The short press, or `[run] auto_start`.
    case button
    /// `pacerctl race start` while no run records: the race is what the runner runs.
    case race
}

/// What a start starts. This is the one place the precedence is decided (README "What a start
/// starts" says the same); later kinds of activity (races, challenges) add their rung here:
///
/// 1. An explicit workout (`run start --workout FILE`) is followed, whatever is planned.
/// 2. `run start --planned` takes today's planned session, or is refused with why.
/// 3. A plain `run start` is a free run: the way to run free on a planned day.
/// 4. The short press (and auto-start) take today's planned session when there is one not run
///    yet, and otherwise start a free run.
/// 5. `race start` with no run recording starts a free run: the race is the workout.
///
/// "Today's session", with several on one day, is the first in plan order (the cloud's: by date,
/// then as planned) that no stored run followed yet; "today" is the plan's timezone's date.
public enum WhatAStartStarts {
    public enum Decision: Sendable, Equatable {
        case follow(Workout, planned: PlannedRun?)
        case free
        case refuse(String)
    }

    public static func decide(_ request: StartRequest, plan: PlanToday) -> Decision {
        switch request {
        case .workout(let workout):
            return .follow(workout, planned: nil)
        case .free, .race:
            return .free
        case .button:
            return plan.next.map { .follow($0.workout, planned: $0) } ?? .free
        case .planned:
            if let next = plan.next { return .follow(next.workout, planned: next) }
            guard let today = plan.today else {
                return .refuse("no training plan on this device (pacerctl plan says why); start without --planned for a free run")
            }
            let todays = plan.todays
            if todays.isEmpty { return .refuse("no session is planned for today (\(today)); pacerctl plan lists the plan") }
            return .refuse("today's planned session\(todays.count == 1 ? " was" : "s were all") run already; "
                + "pacerctl run start --workout with its file (pacerctl plan shows it) runs one again")
        }
    }
}
