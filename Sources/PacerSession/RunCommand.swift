import PacerCore

/// What a person can ask of the run (control socket, buttons).
public enum RunCommand: Sendable, Equatable {
    case status
    /// A free run (`WhatAStartStarts`).
    case start
    /// Start a run that follows a workout.
    case startWorkout(Workout)
    /// Start today's planned session, or be refused.
    case startPlanned
    case stop
    /// Say a sentence (`pacerctl speak`).
    case say(String)
    /// The spoken readiness check.
    case readiness
    case control(RunControl)
    case delete(runID: Int64)
    /// Race mode on for this race (`pacerctl race start`); a run is started when none records.
    case startRace(RaceMode)
    /// Race mode off (`pacerctl race stop`); the run goes on.
    case stopRace
}

/// Why a command was refused, worded for the person who asked.
public struct CommandFailure: Error, Sendable, Equatable {
    public enum Code: String, Sendable {
        case conflict, notFound = "not_found", internalError = "internal"
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }
}
