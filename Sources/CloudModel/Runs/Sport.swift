/// What an activity was. A device records runs; a file says its own (FIT `sport`, TCX `Sport`,
/// GPX `type`), and the runner may change it. Records, run statistics and the plan count runs
/// only; the other sports have totals of their own.
public enum Sport: String, Sendable, CaseIterable, Codable {
    case run, walk, hike, ride, swim, other

    /// As the pages name it.
    public var label: String {
        switch self {
        case .run: "Run"
        case .walk: "Walk"
        case .hike: "Hike"
        case .ride: "Ride"
        case .swim: "Swim"
        case .other: "Other"
        }
    }
}

/// Who sees a run besides its runner.
public enum RunVisibility: String, Sendable, CaseIterable, Codable {
    /// The runner only.
    case `private`
    /// The runner and the monitors they consented to.
    case monitors
    /// Anyone with its share link (a secret URL, revocable), and the monitors.
    case link
}
