import FoundationEssentials
import SQLite
import PacerCore

/// The on-device store of runs: one SQLite file (`/var/lib/pacer/pacer.db`).
///
/// Durability, chosen by measurement (tools/bench-storage): WAL with `synchronous = FULL`, so
/// each batch commit fsyncs the WAL and a power cut loses at most the batch being collected
/// (`RunRecorder.flushInterval` of run time). NORMAL, the usual WAL setting, fsyncs only at
/// checkpoints and can lose minutes on a power cut (SIGKILL loses nothing either way).
///
/// Interrupted runs: a run still `recording` when the store is opened by the next recorder was
/// cut off by a crash, SIGKILL or power loss. `recoverInterruptedRuns()` (called by whoever
/// records, never by readers) marks it `interrupted` and rebuilds its summary from its last
/// durable batch; nothing recorded durably is dropped. The daemon then continues it
/// (`resume(runID:)`) when its first fix comes within `RunStore.resumeWindow` of the run's last
/// stored sample in GPS time, as after a quick reboot mid-run; otherwise the run stays
/// `interrupted`, counts in history and totals like a finished run, and is uploaded like one.
public final class RunStore: Sendable {
    /// How close (GPS time) a restart must come to an interrupted run's last sample to continue it.
    public static let resumeWindowSeconds = 600.0

    let queue: DatabaseQueue
    public let path: String

    /// Opens (creating and migrating when `readOnly` is false) the store at `path`.
    /// `cacheKiB` caps SQLite's page cache for this connection (default 2 MiB); the daemon keeps
    /// it small: it appends and reads back little, and memory on a Pi is scarce.
    public init(path: String, readOnly: Bool = false, cacheKiB: Int? = nil) throws(StoreError) {
        self.path = path
        var config = Configuration()
        config.readonly = readOnly
        config.busyMode = .timeout(5)
        config.label = "pacer.store"
        config.prepareDatabase { db in
            if !readOnly {
                let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                guard mode == "wal" else { throw DatabaseError(message: "could not enable WAL (journal_mode=\(mode ?? "nil"))") }
            }
            try db.execute(sql: "PRAGMA synchronous = FULL")
            if let cacheKiB { try db.execute(sql: "PRAGMA cache_size = -\(max(64, cacheKiB))") }
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
            if !readOnly { try Schema.migrator.migrate(queue) }
        } catch {
            throw Self.wrap(error, "opening \(path)")
        }
    }

    // MARK: Recording

    /// Starts a run, remembering the workout it follows; returns its number.
    public func beginRun(uuid: String, startTime: Timestamp, following followed: FollowedWorkout? = nil) throws(StoreError) -> Int64 {
        try write("starting a run") { db in
            try db.execute(sql: "INSERT INTO run (uuid, state, start_ms, workout_name, planned_session_id) VALUES (?, 'recording', ?, ?, ?)",
                           arguments: [uuid, startTime.milliseconds, followed?.name, followed?.plannedSessionID])
            return db.lastInsertedRowID
        }
    }

    /// Appends one batch in one transaction (one fsync).
    public func append(_ batch: TrackBatch, runID: Int64, runStart: Timestamp) throws(StoreError) {
        guard !batch.isEmpty else { return }
        let first = (batch.firstTime ?? runStart).milliseconds - runStart.milliseconds
        let last = (batch.lastTime ?? runStart).milliseconds - runStart.milliseconds
        let samples = batch.samples.isEmpty ? nil : Data(TrackCodec.encode(batch.samples, runStart: runStart))
        let heart = batch.heartRate.isEmpty ? nil : Data(TrackCodec.encode(batch.heartRate, runStart: runStart))
        let altitude = TrackCodec.encodeAltitudes(batch.samples).map { Data($0) }
        let raw = batch.rawLines.isEmpty ? nil : batch.rawLines.joined(separator: "\n")
        // Cached statements: this runs every few seconds for hours; SQL is compiled once.
        try write("recording run \(runID)") { db in
            let state = try String.fetchOne(db.cachedStatement(sql: "SELECT state FROM run WHERE id = ?"), arguments: [runID])
            guard state == "recording" else { throw StoreError.notRecording(runID) }
            try db.cachedStatement(sql: "INSERT INTO track_chunk (run_id, first_ms, last_ms, samples, heart, raw, altitude) VALUES (?, ?, ?, ?, ?, ?, ?)")
                .execute(arguments: [runID, first, last, samples, heart, raw, altitude])
            let chunk = db.lastInsertedRowID
            try db.cachedStatement(sql: "UPDATE run SET first_chunk_id = ? WHERE id = ? AND first_chunk_id IS NULL")
                .execute(arguments: [chunk, runID])
            try Self.insert(splits: batch.splits, laps: batch.laps, runID: runID, db: db)
        }
    }

    /// Closes a run with its final summary, splits and laps.
    public func finishRun(_ runID: Int64, summary: RunSummary, splits: [Split], laps: [Lap]) throws(StoreError) {
        try write("finishing run \(runID)") { db in
            try db.execute(sql: """
                UPDATE run SET state = 'finished', end_ms = ?, distance_m = ?, moving_s = ?, elapsed_s = ?,
                    max_speed_mps = ?, hr_avg = ?, hr_max = ?
                WHERE id = ?
                """, arguments: [summary.endTime?.milliseconds, summary.distance, summary.movingTime,
                                 summary.elapsedTime, summary.maxSpeed, summary.heartRateAverage, summary.heartRateMax, runID])
            guard db.changesCount == 1 else { throw StoreError.noSuchRun(runID) }
            try Self.insert(splits: splits, laps: laps, runID: runID, db: db)
            try Self.storeBestEfforts(runID: runID, db: db)
        }
    }

    /// Marks runs left `recording` by a recorder that died as `interrupted`, with a summary rebuilt
    /// from their durable batches. Returns their numbers. Only the process that records calls this.
    @discardableResult
    public func recoverInterruptedRuns() throws(StoreError) -> [Int64] {
        try write("recovering interrupted runs") { db in
            let ids = try Int64.fetchAll(db, sql: "SELECT id FROM run WHERE state = 'recording' ORDER BY id")
            for id in ids {
                guard let run = try Self.fetchRun(id, db) else { continue }
                let track = try Self.loadTrack(run, db: db, wantRaw: false)
                let summary = Self.summarize(run: run, track: track)
                try db.execute(sql: """
                    UPDATE run SET state = 'interrupted', end_ms = ?, distance_m = ?, moving_s = ?, elapsed_s = ?,
                        max_speed_mps = ?, hr_avg = ?, hr_max = ?
                    WHERE id = ?
                    """, arguments: [summary.endTime?.milliseconds, summary.distance, summary.movingTime, summary.elapsedTime,
                                     summary.maxSpeed, summary.heartRateAverage, summary.heartRateMax, id])
                try Self.storeBestEfforts(runID: id, samples: track.samples, db: db)
            }
            return ids
        }
    }

    /// Whether an interrupted run can be continued: it is the newest run (so its batches stay
    /// contiguous: only the newest run ever records) and its raw lines, which rebuild the
    /// pipeline's state, are all there.
    public func canResume(_ runID: Int64) throws(StoreError) -> Bool {
        try read("checking run \(runID)") { db in
            guard let run = try Self.fetchRun(runID, db), run.state == .interrupted, !run.rawPruned else { return false }
            return try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM run") == runID
        }
    }

    /// Continues an interrupted run (the daemon's decision, see the type's documentation).
    public func resume(runID: Int64) throws(StoreError) {
        try write("resuming run \(runID)") { db in
            try db.execute(sql: "UPDATE run SET state = 'recording', end_ms = NULL WHERE id = ? AND state = 'interrupted'",
                           arguments: [runID])
            guard db.changesCount == 1 else { throw StoreError.notRecording(runID) }
        }
    }

    // MARK: Reading

    /// Runs newest first, `limit` at a time.
    public func runs(limit: Int = 20, offset: Int = 0) throws(StoreError) -> [StoredRun] {
        try read("listing runs") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM run ORDER BY start_ms DESC, id DESC LIMIT ? OFFSET ?",
                             arguments: [limit, offset]).map(Self.storedRun)
        }
    }

    public func runCount() throws(StoreError) -> Int {
        try read("counting runs") { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM run") ?? 0 }
    }

    /// Finished runs the cloud has not confirmed yet (the readiness check says how many).
    public func runsWaitingForUpload() throws(StoreError) -> Int {
        try read("counting runs waiting for upload") { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM run WHERE upload_state != 'uploaded' AND state != 'recording'") ?? 0
        }
    }

    /// Which of these planned sessions a stored run followed already (so a start takes the next one).
    public func plannedSessionsFollowed(among ids: [String]) throws(StoreError) -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return try read("reading the runs of planned sessions") { db in
            let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
            return Set(try String.fetchAll(db, sql: "SELECT DISTINCT planned_session_id FROM run WHERE planned_session_id IN (\(marks))",
                                           arguments: StatementArguments(ids)))
        }
    }

    public func run(_ id: Int64) throws(StoreError) -> StoredRun? {
        try read("reading run \(id)") { db in try Self.fetchRun(id, db) }
    }

    public func detail(_ id: Int64) throws(StoreError) -> RunDetail {
        try read("reading run \(id)") { db in
            guard let run = try Self.fetchRun(id, db) else { throw StoreError.noSuchRun(id) }
            let track = try Self.loadTrack(run, db: db, wantRaw: false)
            var splits: [Split] = []
            var laps: [Lap] = []
            var lapStart = run.startTime
            for row in try Row.fetchAll(db, sql: "SELECT * FROM split WHERE run_id = ? ORDER BY kind, idx", arguments: [id]) {
                let end = Timestamp(milliseconds: row["end_ms"])
                if row["kind"] == "lap" {
                    laps.append(Lap(index: row["idx"], distance: row["distance_m"], time: row["time_s"], startTime: lapStart, endTime: end))
                    lapStart = end
                } else {
                    splits.append(Split(index: row["idx"], distance: row["distance_m"], time: row["time_s"], endTime: end))
                }
            }
            return RunDetail(run: run, splits: splits, laps: laps, heartRate: Self.heartRateStats(track.heartRate),
                             sampleCount: track.samples.count)
        }
    }

    /// Every stored sample and heart-rate reading of a run, in time order.
    public func track(_ id: Int64) throws(StoreError) -> (samples: [TrackSample], heartRate: [HeartRateSample]) {
        try read("reading run \(id)") { db in
            guard let run = try Self.fetchRun(id, db) else { throw StoreError.noSuchRun(id) }
            let track = try Self.loadTrack(run, db: db, wantRaw: false)
            return (track.samples, track.heartRate)
        }
    }

    /// Streams a run's raw gpsd lines in the order received, a chunk at a time.
    public func forEachRawLine(_ id: Int64, _ body: (Substring) throws -> Void) throws {
        guard let run = try run(id) else { throw StoreError.noSuchRun(id) }
        guard !run.rawPruned else { throw StoreError.unavailable("run \(id)'s raw gpsd lines were removed by retention") }
        try forEachChunkRow(run, columns: "raw") { row in
            if let raw: String = row["raw"] {
                for line in raw.split(separator: "\n", omittingEmptySubsequences: false) { try body(line) }
            }
        }
    }

    /// Streams a run's samples and heart-rate readings, one durable batch at a time, in time order.
    public func forEachTrackChunk(_ id: Int64, _ body: ([TrackSample], [HeartRateSample]) throws -> Void) throws {
        guard let run = try run(id) else { throw StoreError.noSuchRun(id) }
        try forEachChunkRow(run, columns: "samples, heart, altitude") { row in
            var samples: [TrackSample] = []
            var readings: [HeartRateSample] = []
            if let data: Data = row["samples"] { try TrackCodec.decodeSamples([UInt8](data), runStart: run.startTime, into: &samples) }
            if let data: Data = row["altitude"] { try TrackCodec.decodeAltitudes([UInt8](data), into: &samples, from: 0) }
            if let data: Data = row["heart"] { try TrackCodec.decodeHeartRate([UInt8](data), runStart: run.startTime, into: &readings) }
            try body(samples, readings)
        }
    }

    /// A page of chunk rows per read, so a 3-hour run never sits in memory at once.
    private func forEachChunkRow(_ run: StoredRun, columns: String, _ body: (Row) throws -> Void) throws {
        let range = try read("reading run \(run.id)") { db in try Self.chunkRange(run, db) }
        guard let range else { return }
        var next = range.lowerBound
        while next < range.upperBound {
            let page = try read("reading run \(run.id)") { db in
                try Row.fetchAll(db, sql: "SELECT id, \(columns) FROM track_chunk WHERE id >= ? AND id < ? AND run_id = ? ORDER BY id LIMIT 256",
                                 arguments: [next, range.upperBound, run.id])
            }
            guard let last = page.last else { break }
            for row in page { try body(row) }
            next = (last["id"] as Int64) + 1
        }
    }

    // MARK: Changing history

    public func deleteRun(_ id: Int64) throws(StoreError) {
        try write("deleting run \(id)") { db in
            guard let run = try Self.fetchRun(id, db) else { throw StoreError.noSuchRun(id) }
            if let range = try Self.chunkRange(run, db) {
                try db.execute(sql: "DELETE FROM track_chunk WHERE id >= ? AND id < ? AND run_id = ?",
                               arguments: [range.lowerBound, range.upperBound, id])
            }
            try db.execute(sql: "DELETE FROM run WHERE id = ?", arguments: [id])
        }
    }

    public func setUploadState(_ state: UploadState, runID: Int64, at time: Timestamp?) throws(StoreError) {
        try write("marking run \(runID) \(state.rawValue)") { db in
            try db.execute(sql: "UPDATE run SET upload_state = ?, uploaded_ms = ? WHERE id = ?",
                           arguments: [state.rawValue, state == .uploaded ? time?.milliseconds : nil, runID])
            guard db.changesCount == 1 else { throw StoreError.noSuchRun(runID) }
        }
    }

    /// Retention: removes the raw gpsd lines of runs that are uploaded and ended before `cutoff`,
    /// keeping summaries, samples and heart rate. The freed pages go to SQLite's free list and
    /// take the next runs' data, so the file stops growing. (auto_vacuum would hand them back to
    /// the file system, but costs a pointer-map page write on every page a batch allocates: 13 %
    /// more bytes written per hour, measured with tools/bench-storage.)
    @discardableResult
    public func pruneRawLines(endedBefore cutoff: Timestamp) throws(StoreError) -> [Int64] {
        let pruned: [Int64] = try write("pruning raw lines") { db in
            let runs = try Row.fetchAll(db, sql: """
                SELECT * FROM run WHERE upload_state = 'uploaded' AND raw_pruned = 0 AND state != 'recording'
                    AND end_ms IS NOT NULL AND end_ms < ?
                """, arguments: [cutoff.milliseconds]).map(Self.storedRun)
            for run in runs {
                if let range = try Self.chunkRange(run, db) {
                    try db.execute(sql: "UPDATE track_chunk SET raw = NULL WHERE id >= ? AND id < ? AND run_id = ?",
                                   arguments: [range.lowerBound, range.upperBound, run.id])
                }
                try db.execute(sql: "UPDATE run SET raw_pruned = 1 WHERE id = ?", arguments: [run.id])
            }
            return runs.map(\.id)
        }
        return pruned
    }

    /// `PRAGMA integrity_check`: "ok" or SQLite's list of problems.
    public func integrityCheck() throws(StoreError) -> String {
        try read("checking integrity") { db in
            try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "\n")
        }
    }

    /// All-time personal records, folded from every run's best efforts.
    public func personalRecords() throws(StoreError) -> PersonalRecords {
        try read("reading personal records") { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM best_effort")
            return PersonalRecords(rows.map { row in
                PersonalRecord(runID: row["run_id"], effort: BestEffort(
                    distance: RecordDistance(meters: row["distance_m"]), duration: row["duration_s"],
                    start: Timestamp(milliseconds: row["start_ms"]), end: Timestamp(milliseconds: row["end_ms"]),
                    movingTime: row["moving_s"]))
            })
        }
    }

    /// Every run's start, distance and moving time, for totals and goals.
    public func historyRuns() throws(StoreError) -> [HistoryRun] {
        try read("reading history") { db in
            try Row.fetchAll(db, sql: "SELECT start_ms, distance_m, moving_s FROM run WHERE state != 'recording'").map {
                HistoryRun(start: Timestamp(milliseconds: $0["start_ms"]), distance: $0["distance_m"], movingTime: $0["moving_s"])
            }
        }
    }

    public func goals() throws(StoreError) -> [(id: Int64, goal: DistanceGoal)] {
        try read("reading goals") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM goal ORDER BY id").compactMap { row in
                guard let period = PeriodKind(rawValue: row["period"]),
                    let goal = DistanceGoal(period: period, target: row["distance_m"])
                else { return nil }
                return (row["id"], goal)
            }
        }
    }

    public func addGoal(_ goal: DistanceGoal, at time: Timestamp) throws(StoreError) -> Int64 {
        try write("adding a goal") { db in
            try db.execute(sql: "INSERT INTO goal (period, distance_m, created_ms) VALUES (?, ?, ?)",
                           arguments: [goal.period.rawValue, goal.target, time.milliseconds])
            return db.lastInsertedRowID
        }
    }

    public func removeGoal(_ id: Int64) throws(StoreError) {
        try write("removing goal \(id)") { db in
            try db.execute(sql: "DELETE FROM goal WHERE id = ?", arguments: [id])
            guard db.changesCount == 1 else { throw StoreError.noSuchGoal(id) }
        }
    }

    // MARK: Internals

    static func storeBestEfforts(runID: Int64, samples: [TrackSample]? = nil, db: Database) throws {
        let track: [TrackSample]
        if let samples {
            track = samples
        } else {
            guard let run = try fetchRun(runID, db) else { return }
            track = try loadTrack(run, db: db, wantRaw: false).samples
        }
        let efforts = PersonalRecords.bestEfforts(in: track.map(EffortSample.init))
        try db.execute(sql: "DELETE FROM best_effort WHERE run_id = ?", arguments: [runID])
        for effort in efforts.compactMap({ $0 }) {
            try db.execute(sql: "INSERT INTO best_effort VALUES (?, ?, ?, ?, ?, ?)", arguments: [
                runID, effort.distance.meters, effort.duration, effort.start.milliseconds, effort.end.milliseconds, effort.movingTime,
            ])
        }
    }

    struct Track {
        var samples: [TrackSample] = []
        var heartRate: [HeartRateSample] = []
        var lastMs: Int64 = 0
    }

    /// A run's chunk ids: from its first chunk to the next run's first chunk (exclusive).
    static func chunkRange(_ run: StoredRun, _ db: Database) throws -> Range<Int64>? {
        guard let first = try Int64.fetchOne(db, sql: "SELECT first_chunk_id FROM run WHERE id = ?", arguments: [run.id]) else {
            return nil
        }
        let next = try Int64.fetchOne(db, sql: "SELECT MIN(first_chunk_id) FROM run WHERE first_chunk_id > ?", arguments: [first])
        return first..<(next ?? Int64.max)
    }

    static func loadTrack(_ run: StoredRun, db: Database, wantRaw: Bool) throws -> Track {
        var track = Track()
        guard let range = try chunkRange(run, db) else { return track }
        let rows = try Row.fetchCursor(db, sql: "SELECT last_ms, samples, heart, altitude FROM track_chunk WHERE id >= ? AND id < ? AND run_id = ? ORDER BY id",
                                       arguments: [range.lowerBound, range.upperBound, run.id])
        while let row = try rows.next() {
            let first = track.samples.count
            if let data: Data = row["samples"] { try TrackCodec.decodeSamples([UInt8](data), runStart: run.startTime, into: &track.samples) }
            if let data: Data = row["altitude"] { try TrackCodec.decodeAltitudes([UInt8](data), into: &track.samples, from: first) }
            if let data: Data = row["heart"] { try TrackCodec.decodeHeartRate([UInt8](data), runStart: run.startTime, into: &track.heartRate) }
            track.lastMs = max(track.lastMs, row["last_ms"])
        }
        return track
    }

    static func summarize(run: StoredRun, track: Track) -> RunSummary {
        let last = track.samples.last
        let hr = heartRateStats(track.heartRate)
        return RunSummary(
            distance: last?.distance ?? 0, movingTime: last?.movingTime ?? 0, elapsedTime: Double(track.lastMs) / 1000,
            averagePacePerKm: nil, maxSpeed: track.samples.map(\.speed).max() ?? 0,
            heartRateAverage: hr?.average, heartRateMax: hr?.maximum,
            startTime: run.startTime, endTime: Timestamp(milliseconds: run.startTime.milliseconds + track.lastMs))
    }

    static func heartRateStats(_ readings: [HeartRateSample]) -> HeartRateStats? {
        var sum = 0, count = 0, low = Int.max, high = 0
        for r in readings where r.isValid {
            sum += r.bpm
            count += 1
            low = min(low, r.bpm)
            high = max(high, r.bpm)
        }
        return count == 0 ? nil : HeartRateStats(readings: count, average: Double(sum) / Double(count), minimum: low, maximum: high)
    }

    static func insert(splits: [Split], laps: [Lap], runID: Int64, db: Database) throws {
        for s in splits {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO split VALUES (?, 'split', ?, ?, ?, ?)")
                .execute(arguments: [runID, s.index, s.distance, s.time, s.endTime.milliseconds])
        }
        for l in laps {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO split VALUES (?, 'lap', ?, ?, ?, ?)")
                .execute(arguments: [runID, l.index, l.distance, l.time, l.endTime.milliseconds])
        }
    }

    static func fetchRun(_ id: Int64, _ db: Database) throws -> StoredRun? {
        try Row.fetchOne(db, sql: "SELECT * FROM run WHERE id = ?", arguments: [id]).map(storedRun)
    }

    static func storedRun(_ row: Row) -> StoredRun {
        StoredRun(
            id: row["id"], uuid: row["uuid"], state: RunState(rawValue: row["state"]) ?? .interrupted,
            startTime: Timestamp(milliseconds: row["start_ms"]),
            endTime: (row["end_ms"] as Int64?).map(Timestamp.init(milliseconds:)),
            distance: row["distance_m"], movingTime: row["moving_s"], elapsedTime: row["elapsed_s"],
            maxSpeed: row["max_speed_mps"], heartRateAverage: row["hr_avg"], heartRateMax: row["hr_max"],
            uploadState: UploadState(rawValue: row["upload_state"]) ?? .pending, rawPruned: row["raw_pruned"] != 0,
            followed: (row["workout_name"] as String?).map { FollowedWorkout(name: $0, plannedSessionID: row["planned_session_id"]) })
    }

    func write<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do { return try queue.write(body) } catch { throw Self.wrap(error, what) }
    }

    func read<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do { return try queue.read(body) } catch { throw Self.wrap(error, what) }
    }

    static func wrap(_ error: any Error, _ what: String) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? DatabaseError {
            // SQLite's own words carry the cause an operator can act on: "database or disk is full",
            // "attempt to write a readonly database", "file is not a database".
            return .unavailable("\(what): \(error.message ?? "SQLite error \(error.resultCode.rawValue)")")
        }
        return .unavailable("\(what): \(error)")
    }
}
