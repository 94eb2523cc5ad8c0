import CloudModel
import CloudStore
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// A race's frame as this instance sends it: decoded once, the part every spectator gets
/// already written as a server-sent event, and each runner's row by bib for the followers.
struct RaceFrameUpdate: Sendable {
    let frame: RaceFrame
    /// `event: frame` with the top of the board, the markers (small races) and the density.
    let shared: ByteBuffer
    let rowsByBib: [Int: RaceFrame.Row]

    init(frame: RaceFrame) {
        self.frame = frame
        var view = frame.view(following: [])
        view.followed = []
        let json = (try? JSONEncoder().encode(view)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        shared = ByteBuffer(string: "event: frame\ndata: " + json + "\n\n")
        rowsByBib = Dictionary(frame.rows.map { ($0.bib, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// `event: follow` with the followed runners' rows, or nil when following none.
    func followEvent(bibs: [Int]) -> ByteBuffer? {
        let rows = bibs.compactMap { rowsByBib[$0] }
        guard !bibs.isEmpty, let data = try? JSONEncoder().encode(FollowedRows(seq: frame.seq, made_ms: frame.made_ms, rows: rows)) else { return nil }
        return ByteBuffer(string: "event: follow\ndata: " + String(decoding: data, as: UTF8.self) + "\n\n")
    }

    struct FollowedRows: Encodable {
        let seq: Int64
        let made_ms: Int64
        let rows: [RaceFrame.Row]
    }
}

/// Races' frames (#34). Every `period`, each instance looks for races whose runners changed;
/// the one that claims a race's next frame in the store (at most one per race per period,
/// whichever instance) makes it from the entries, stores it, and publishes one hub event, an id
/// only (one NOTIFY per race per period on PostgreSQL, never one per position). Every instance
/// then reads the frame once and hands it to its own spectators of that race.
final class RaceFrames: Service, Sendable {
    private let races: RaceRepository
    private let hub: any EventHub
    let period: Duration
    private let wallClock: @Sendable () -> Int64
    private let logger: Logger

    /// Spectators on this instance, per race: each a stream keeping only the newest frame (a
    /// slow reader skips frames, never queues them).
    private let watchers = Mutex<[String: [UUID: AsyncStream<RaceFrameUpdate>.Continuation]]>([:])
    /// The newest frame read per race (a late joiner's first paint, and no second read of one frame).
    private let latest = Mutex<[String: RaceFrameUpdate]>([:])
    /// Frames are made once the store is migrated (`markReady`).
    private let ready = Atomic<Bool>(false)
    /// When a failure was last logged: one line a minute, not one a period.
    private let lastWarning = Mutex<ContinuousClock.Instant?>(nil)

    init(races: RaceRepository, hub: any EventHub, period: Duration = .milliseconds(500), wallClock: @escaping @Sendable () -> Int64,
         logger: Logger = Logger(label: "pacer-cloud.races")) {
        self.races = races
        self.hub = hub
        self.period = period
        self.wallClock = wallClock
        self.logger = logger
    }

    var periodMs: Int64 { period.milliseconds }

    func run() async throws {
        let subscription = hub.subscribe(bufferingNewest: 1024)
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.makeFrames() }
                group.addTask {
                    for await signal in subscription.signals {
                        guard case .event(let event) = signal, event.kind == .race, let seq = Int64(event.subject) else { continue }
                        await self.frameArrived(raceID: event.account, seq: seq)
                    }
                }
                await group.next()
                subscription.end()
                group.cancelAll()
            }
        }
        finishAll()
    }

    /// The store is migrated: frames may be made.
    func markReady() { ready.store(true, ordering: .releasing) }

    private func makeFrames() async {
        while !Task.isCancelled {
            if ready.load(ordering: .acquiring) {
                do { try await makeDueFrames() } catch {
                    let now = ContinuousClock.now
                    let due = lastWarning.withLock { last in
                        guard last.map({ now - $0 >= .seconds(60) }) ?? true else { return false }
                        last = now
                        return true
                    }
                    if due { logger.warning("race frames could not be made (again in \(period)): \(String(reflecting: error))") }
                }
            }
            try? await Task.sleep(for: period)
        }
    }

    /// One round: a frame for each race that changed and whose last frame is a period old.
    func makeDueFrames() async throws {
        for raceID in try await races.racesWithChanges() {
            let nowMs = wallClock()
            guard let seq = try await races.claimFrame(raceID: raceID, nowMs: nowMs, periodMs: periodMs),
                  let race = try await races.race(id: raceID) else { continue }
            let frame = RaceFrame.make(race: race, entries: try await races.entries(raceID: raceID), seq: seq, nowMs: nowMs)
            try await races.storeFrame(raceID: raceID, seq: seq, json: String(decoding: try JSONEncoder().encode(frame), as: UTF8.self))
            await hub.publish(HubEvent(kind: .race, account: raceID, subject: String(seq)))
        }
    }

    private func frameArrived(raceID: String, seq: Int64) async {
        let hasWatchers = watchers.withLock { !($0[raceID]?.isEmpty ?? true) }
        guard hasWatchers, (latest.withLock { $0[raceID]?.frame.seq ?? -1 }) < seq else { return }
        guard let update = try? await read(raceID: raceID) else { return }
        deliver(update)
    }

    private func read(raceID: String) async throws -> RaceFrameUpdate? {
        guard let json = try await races.frame(raceID: raceID),
              let frame = try? JSONDecoder().decode(RaceFrame.self, from: Data(json.utf8)) else { return nil }
        return RaceFrameUpdate(frame: frame)
    }

    /// Hands a newer frame to the race's watchers; false when it was not newer.
    @discardableResult
    private func deliver(_ update: RaceFrameUpdate) -> Bool {
        let raceID = update.frame.race
        let isNewer = latest.withLock { latest -> Bool in
            guard (latest[raceID]?.frame.seq ?? -1) < update.frame.seq else { return false }
            latest[raceID] = update
            return true
        }
        guard isNewer else { return false }
        for continuation in watchers.withLock({ Array(($0[raceID] ?? [:]).values) }) { continuation.yield(update) }
        return true
    }

    /// The race's frames from now on, starting with the newest there is (read from the store:
    /// this instance kept none while nobody here watched). Ends when the caller stops reading
    /// or the server stops.
    func watch(raceID: String) async -> AsyncStream<RaceFrameUpdate> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: RaceFrameUpdate.self, bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in
            self?.watchers.withLock { watchers in
                watchers[raceID]?[id] = nil
                if watchers[raceID]?.isEmpty == true {
                    watchers[raceID] = nil
                    // Nobody here watches it: its frames are no longer read, so no longer kept.
                    self?.latest.withLock { _ = $0.removeValue(forKey: raceID) }
                }
            }
        }
        watchers.withLock { $0[raceID, default: [:]][id] = continuation }
        let delivered = if let read = try? await read(raceID: raceID) { deliver(read) } else { false }
        if !delivered, let known = latest.withLock({ $0[raceID] }) { continuation.yield(known) }
        return stream
    }

    /// The newest frame of the race, from the store, for a page's first paint and `/frame`.
    func current(raceID: String) async throws -> RaceFrame? {
        try await read(raceID: raceID)?.frame
    }

    var watcherCount: Int { watchers.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    private func finishAll() {
        for continuation in watchers.withLock({ $0.values.flatMap(\.values) }) { continuation.finish() }
    }
}
