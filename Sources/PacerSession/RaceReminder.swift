import PacerContract
import PacerCore

/// A race of the last sync, as the reminder needs it.
public struct UpcomingRace: Sendable, Equatable {
    public var id: String
    public var name: String
    /// The official start, ms since the epoch (wall clock).
    public var startsAtMs: Int64
    public var bib: Int

    public init(id: String, name: String, startsAtMs: Int64, bib: Int) {
        self.id = id
        self.name = name
        self.startsAtMs = startsAtMs
        self.bib = bib
    }

    /// The sync's races, those whose start is a time (the contract's `Time`).
    public static func from(_ races: [DeviceRace]) -> [UpcomingRace] {
        races.compactMap { race in
            WireTime.milliseconds(race.starts_at).map { UpcomingRace(id: race.id, name: race.name, startsAtMs: $0, bib: race.bib) }
        }
    }
}

/// "The race Naviglio 10k starts in 15 minutes, bib 12.": said once per race, `minutes` before
/// its start (`[race] reminder_min`). Pure: the races, those already reminded of and the wall
/// clock in, the reminders due out.
public enum RaceReminder {
    public struct Due: Sendable, Equatable {
        public var raceID: String
        public var text: String
    }

    /// Races whose reminder time has come and whose start has not: a device switched on five
    /// minutes before the start still hears it ("starts in 5 minutes"), one switched on after
    /// the start does not.
    public static func due(_ races: [UpcomingRace], said: Set<String>, nowMs: Int64, minutes: Int) -> [Due] {
        guard minutes > 0 else { return [] }
        return races.compactMap { race in
            let leftMs = race.startsAtMs - nowMs
            guard !said.contains(race.id), leftMs > 0, leftMs <= Int64(minutes) * 60_000 else { return nil }
            let left = Int((Double(leftMs) / 60_000).rounded(.up))
            let when = left == 1 ? "1 minute" : "\(left) minutes"
            return Due(raceID: race.id, text: "The race \(race.name) starts in \(when), bib \(race.bib).")
        }
    }
}
