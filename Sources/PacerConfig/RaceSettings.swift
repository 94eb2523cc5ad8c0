/// `[race]`: race mode on the device (issue #34).
public struct RaceSettings: Sendable, Equatable {
    /// In race mode, a position (time, place, progress along the course) goes to the race
    /// every this many seconds, ahead of any backlog.
    public var positionEverySeconds = 5.0
    /// The reminder is said this many minutes before a race's start ("The race Naviglio 10k
    /// starts in 15 minutes, bib 12."); 0: no reminder.
    public var reminderMinutes = 15

    public init() {}
}
