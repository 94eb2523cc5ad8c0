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

/// Races' frames (#34). Every `period`, each instance looks at the races it changed itself
/// (positions written, runners marked: `noteChange`), so an idle instance never asks the store;
/// the one that claims a race's next frame in the store (at most one per race per period,
/// whichever instance) makes it from the entries, stores it, and publishes one hub event, an id
/// only (one NOTIFY per race per period on PostgreSQL, never one per position). Every instance
/// that has spectators of the race, or devices posting to it, then reads the frame once, keeps
/// it decoded, and hands it to its own spectators; a new spectator and a device's reply (its
/// place) are served from that copy, so no request decodes a frame of thousands of runners.
final class RaceFrames: Service, Sendable {
    private let races: RaceRepository
    private let hub: any EventHub
    let period: Duration
    private let wallClock: @Sendable () -> Int64
    private let logger: Logger

    /// Spectators on this instance, per race: each a stream keeping only the newest frame (a
    /// slow reader skips frames, never queues them).
    private let watchers = Mutex<[String: [UUID: AsyncStream<RaceFrameUpdate>.Continuation]]>([:])
    /// The newest frame read per race, decoded, while this instance has a use for it.
    private let latest = Mutex<[String: RaceFrameUpdate]>([:])
    /// When a device last posted to the race through this instance: its frames are read so its
    /// replies can say the runner's place.
    private let interest = Mutex<[String: ContinuousClock.Instant]>([:])
    /// Races this instance changed whose change no frame shows yet.
    private let changed = Mutex<Set<String>>([])
    /// A race's frame being read from the store: others asking meanwhile wait for that read.
    private let reading = Mutex<[String: Task<RaceFrameUpdate?, Never>]>([:])
    /// Frames are made once the store is migrated (`markReady`).
    private let ready = Atomic<Bool>(false)
    /// When a failure was last logged: one line a minute, not one a period.
    private let lastWarning = Mutex<ContinuousClock.Instant?>(nil)
    /// A device that posted within this is still interested.
    static let interestLasts: Duration = .seconds(60)

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

    /// Rounds at a fixed rate (the next one a period after the last began, not after it
    /// ended), so a race's frames come every period and not every period plus the work.
    private func makeFrames() async {
        let clock = ContinuousClock()
        var next = clock.now
        while !Task.isCancelled {
            if ready.load(ordering: .acquiring) {
                do { try await makeDueFrames() } catch {
                    let now = clock.now
                    let due = lastWarning.withLock { last in
                        guard last.map({ now - $0 >= .seconds(60) }) ?? true else { return false }
                        last = now
                        return true
                    }
                    if due { logger.warning("race frames could not be made (again in \(period)): \(String(reflecting: error))") }
                }
                forgetUnused()
            }
            next = max(next + period, clock.now)
            try? await Task.sleep(until: next, clock: clock)
        }
    }

    /// This instance changed what the race's frame shows: the next round makes a frame of it.
    func noteChange(raceID: String) {
        _ = changed.withLock { $0.insert(raceID) }
    }

    /// One round: a frame for each race this instance changed, once its last frame (by any
    /// instance) is a period old; a race claimed too early waits for the next round. The instance
    /// that made it hands it to its own spectators at once, without reading it back.
    func makeDueFrames() async throws {
        let due = changed.withLock { changed -> Set<String> in
            defer { changed = [] }
            return changed
        }
        for raceID in due {
            let nowMs = wallClock()
            // A tenth of a period's slack: two instances' timers never make a period skip a frame.
            guard let seq = try await races.claimFrame(raceID: raceID, nowMs: nowMs, periodMs: periodMs - periodMs / 10) else {
                if try await races.hasChanges(raceID: raceID) { noteChange(raceID: raceID) }
                continue
            }
            guard let race = try await races.race(id: raceID) else { continue }
            let frame = RaceFrame.make(race: race, entries: try await races.entries(raceID: raceID), seq: seq, nowMs: nowMs)
            try await races.storeFrame(raceID: raceID, seq: seq, json: String(decoding: try JSONEncoder().encode(frame), as: UTF8.self))
            if isInUse(raceID) { deliver(RaceFrameUpdate(frame: frame)) }
            await hub.publish(HubEvent(kind: .race, account: raceID, subject: String(seq)))
        }
    }

    /// Whether this instance has spectators of the race, or a device posted to it lately.
    private func isInUse(_ raceID: String) -> Bool {
        if watchers.withLock({ !($0[raceID]?.isEmpty ?? true) }) { return true }
        guard let last = interest.withLock({ $0[raceID] }) else { return false }
        return ContinuousClock.now - last < Self.interestLasts
    }

    private func frameArrived(raceID: String, seq: Int64) async {
        guard isInUse(raceID), (latest.withLock { $0[raceID]?.frame.seq ?? -1 }) < seq else { return }
        guard let update = await readOnce(raceID: raceID) else { return }
        deliver(update)
    }

    /// The race's frame from the store, decoded; concurrent asks share one read.
    private func readOnce(raceID: String) async -> RaceFrameUpdate? {
        let task = reading.withLock { reading -> Task<RaceFrameUpdate?, Never> in
            if let running = reading[raceID] { return running }
            let task = Task { () -> RaceFrameUpdate? in
                defer { _ = self.reading.withLock { $0.removeValue(forKey: raceID) } }
                return try? await self.read(raceID: raceID)
            }
            reading[raceID] = task
            return task
        }
        return await task.value
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

    /// Frames kept for races this instance no longer serves are dropped (memory stays bounded
    /// by the races in use here).
    private func forgetUnused() {
        let now = ContinuousClock.now
        let stale = interest.withLock { interest -> [String] in
            let old = interest.filter { now - $0.value >= Self.interestLasts }.map(\.key)
            for key in old { interest[key] = nil }
            return old
        }
        for raceID in stale where !isInUse(raceID) { _ = latest.withLock { $0.removeValue(forKey: raceID) } }
    }

    /// The race's frames from now on, starting with the newest there is (this instance's copy,
    /// else read once from the store however many ask at once). Ends when the caller stops
    /// reading or the server stops.
    func watch(raceID: String) async -> AsyncStream<RaceFrameUpdate> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: RaceFrameUpdate.self, bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            let empty = self.watchers.withLock { watchers -> Bool in
                watchers[raceID]?[id] = nil
                guard watchers[raceID]?.isEmpty == true else { return false }
                watchers[raceID] = nil
                return true
            }
            // Nobody here watches it: its frames are kept only while devices post to it here.
            if empty, !self.isInUse(raceID) { _ = self.latest.withLock { $0.removeValue(forKey: raceID) } }
        }
        watchers.withLock { $0[raceID, default: [:]][id] = continuation }
        if let known = latest.withLock({ $0[raceID] }) {
            continuation.yield(known)
        } else if let read = await readOnce(raceID: raceID), !deliver(read), let known = latest.withLock({ $0[raceID] }) {
            continuation.yield(known)
        }
        return stream
    }

    /// A device posted to the race through this instance: its frames are kept here from now on.
    func noteDevice(raceID: String) {
        let now = ContinuousClock.now
        interest.withLock { $0[raceID] = now }
    }

    /// The runner's row in this instance's newest frame of the race (nil until one is kept).
    func row(raceID: String, bib: Int) -> (row: RaceFrame.Row, started: Int)? {
        latest.withLock { latest in
            guard let update = latest[raceID], let row = update.rowsByBib[bib] else { return nil }
            return (row, update.frame.started)
        }
    }

    /// The newest frame of the race, for a page's first paint and `/frame`: this instance's
    /// copy, else the store's.
    func current(raceID: String) async throws -> RaceFrame? {
        if let known = latest.withLock({ $0[raceID] }) { return known.frame }
        return await readOnce(raceID: raceID)?.frame
    }

    var watcherCount: Int { watchers.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    private func finishAll() {
        for continuation in watchers.withLock({ $0.values.flatMap(\.values) }) { continuation.finish() }
    }
}
