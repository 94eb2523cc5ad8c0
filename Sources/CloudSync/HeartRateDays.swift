import FoundationEssentials
import PacerContract
import PacerCore
import Synchronization

/// The strap's readings outside runs summed up per day (`DailyHeartRate`) for the heartbeat's
/// `hr_daily`: fed by the pipeline thread, read, marked accepted and saved by the sync thread.
/// Days are local to the account's time zone (the sync's `profile`; UTC until one is known).
///
/// Kept in the state directory (`heart-rate-days.json`), written at most every
/// `saveEverySeconds` and at shutdown: a crash loses at most those minutes of readings (a day's
/// summary is hardly moved by them), a restart nothing; writing on every reading would wear
/// the SD card for no gain.
public final class HeartRateDays: Sendable {
    public static let saveEverySeconds: Int64 = 600

    private struct State {
        var log = DailyHeartRate()
        var changed = false
        var savedMs: Int64 = 0
    }

    private let file: SyncFile
    private let state = Mutex(State())
    /// The account's time zone, by name (nil: UTC).
    private let zone = Mutex<(name: String?, zone: ZoneOffsets)>((nil, .utc))

    /// `log` hears of a file that cannot be used (it is then started afresh).
    public init(storePath: String, log: @Sendable (SyncLogLevel, String) -> Void) {
        file = SyncFile(beside: storePath, name: "heart-rate-days.json")
        do {
            if let bytes = try file.read() {
                let saved = try JSONDecoder().decode(DailyHeartRate.self, from: Data(bytes))
                state.withLock { $0.log = saved }
            }
        } catch {
            log(.warning, "sync: the heart-rate days (\(file.path)) cannot be used: \(error); they start afresh")
        }
    }

    public var timezone: String? { zone.withLock { $0.name } }

    /// The account's time zone from the sync's profile; an unknown name keeps the one in use.
    public func use(timezone name: String?) {
        guard let name, name != timezone, let found = ZoneFile.offsets(named: name) else { return }
        zone.withLock { $0 = (name, found) }
    }

    /// One valid reading, taken outside a run at wall-clock `timeMs`.
    public func add(bpm: Int, timeMs: Int64) {
        let offset = zone.withLock { $0.zone.secondsFromUTC(at: Timestamp(milliseconds: timeMs)) }
        state.withLock {
            $0.log.add(bpm: bpm, at: Timestamp(milliseconds: timeMs), utcOffsetSeconds: offset)
            $0.changed = true
        }
    }

    /// The days the cloud does not have yet (nil when none), as the heartbeat carries them.
    public func unsent() -> [DeviceState.DailyHeartRate]? {
        let days = state.withLock { $0.log.unsent(limit: DeviceState.maxDailyEntries) }
        guard !days.isEmpty else { return nil }
        return days.map { .init(date: $0.date, count: $0.count, min_bpm: $0.minBpm, resting_bpm: $0.restingBpm) }
    }

    /// The cloud took these days (a heartbeat's `hr_daily` answered 2xx).
    public func accepted(_ days: [DeviceState.DailyHeartRate]) {
        state.withLock {
            $0.log.accepted(days.map { .init(date: $0.date, count: $0.count, minBpm: $0.min_bpm, restingBpm: $0.resting_bpm) })
            $0.changed = true
        }
    }

    /// Writes the days when they changed and `force` or `saveEverySeconds` passed since the last write.
    func save(nowMs: Int64, force: Bool, log: @Sendable (SyncLogLevel, String) -> Void) {
        let snapshot: DailyHeartRate? = state.withLock {
            guard $0.changed, force || nowMs - $0.savedMs >= Self.saveEverySeconds * 1_000 else { return nil }
            $0.changed = false
            $0.savedMs = nowMs
            return $0.log
        }
        guard let snapshot, let bytes = SyncEngine.json(snapshot) else { return }
        do { try file.write(bytes) } catch {
            log(.warning, "sync: cannot keep the heart-rate days: \(error); a restart would lose today's readings so far")
        }
    }

    /// Every day kept, oldest first (tests, `pacerctl`).
    public var summaries: [DailyHeartRate.Summary] { state.withLock { $0.log.summaries } }
}
