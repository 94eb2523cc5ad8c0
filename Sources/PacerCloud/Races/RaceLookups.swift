import CloudModel
import CloudStore
import Synchronization

/// A race and its runners' bibs and statuses, kept per instance for `ttl`: a device posts every
/// few seconds, and reading the race and its entry for each post was two queries per position.
/// A change (an organiser's mark, a postponement) is seen within `ttl`; what a post writes never
/// moves a disqualified runner's marker whatever this copy says (`addPositions`).
final class RaceLookups: Sendable {
    struct Entry: Sendable {
        let race: Race
        let runners: [String: (bib: Int, status: RaceEntryStatus)]
        let loaded: ContinuousClock.Instant
    }

    private let races: RaceRepository
    private let ttl: Duration
    private let kept = Mutex<[String: Entry]>([:])
    private let loading = Mutex<[String: Task<Entry?, any Error>]>([:])
    /// Races kept at most; the oldest goes first.
    static let maxRaces = 256

    init(races: RaceRepository, ttl: Duration = .seconds(5)) {
        self.races = races
        self.ttl = ttl
    }

    /// The race and the runners, from this instance's copy while it is fresh; nil when no race
    /// has the id. When the copy lacks `runner` (enrolled a moment ago), it is read again, at
    /// most once a second, before the device is told it is not enrolled.
    func race(_ id: String, runner: String? = nil) async throws -> Entry? {
        let now = ContinuousClock.now
        if let entry = kept.withLock({ $0[id] }), now - entry.loaded < ttl,
           runner.map({ entry.runners[$0] != nil }) ?? true || now - entry.loaded < .seconds(1) {
            return entry
        }
        let task = loading.withLock { loading -> Task<Entry?, any Error> in
            if let running = loading[id] { return running }
            let task = Task { () throws -> Entry? in
                defer { _ = self.loading.withLock { $0.removeValue(forKey: id) } }
                guard let race = try await self.races.race(id: id) else { return nil }
                return Entry(race: race, runners: try await self.races.entryKeys(raceID: id), loaded: ContinuousClock.now)
            }
            loading[id] = task
            return task
        }
        guard let entry = try await task.value else {
            _ = kept.withLock { $0.removeValue(forKey: id) }
            return nil
        }
        kept.withLock { kept in
            kept[id] = entry
            if kept.count > Self.maxRaces, let oldest = kept.min(by: { $0.value.loaded < $1.value.loaded })?.key { kept[oldest] = nil }
        }
        return entry
    }
}
