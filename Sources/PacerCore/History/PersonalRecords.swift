/// Personal records: the fastest stretch of each target distance inside a run, found anywhere in
/// the run (not only between split marks), and the all-time best of those across runs.
///
/// Per run, `bestEfforts(in:for:)` sweeps the samples once per target with two pointers: O(n) per
/// target, no allocation beyond one copy of the samples shared by all targets. Between two samples
/// the runner is taken to move at constant speed (the samples are the tracker's output, already
/// smoothed, at about 1 Hz), so both ends of a stretch are interpolated linearly and every stretch
/// covers exactly the target distance.
///
/// All-time records are a fold: `add` keeps, per distance, the effort that `PersonalRecord.beats`
/// every other one, with the run id it came from. The fold is order-independent, so after a run is
/// deleted the Store rebuilds the records from the remaining runs' stored bests (there is no
/// incremental "remove": the runner-up is not kept).
public struct PersonalRecords: Sendable, Equatable {
    public private(set) var byDistance: [RecordDistance: PersonalRecord] = [:]

    public init() {}

    public init(_ records: some Sequence<PersonalRecord>) {
        for record in records { add(record) }
    }

    public subscript(distance: RecordDistance) -> PersonalRecord? { byDistance[distance] }

    /// All records, shortest distance first.
    public var sorted: [PersonalRecord] {
        byDistance.values.sorted { $0.effort.distance.meters < $1.effort.distance.meters }
    }

    /// Keeps `record` if it beats the current record for its distance (or there is none).
    /// Returns whether it did: a new personal record.
    @discardableResult
    public mutating func add(_ record: PersonalRecord) -> Bool {
        let key = record.effort.distance
        if let current = byDistance[key], !record.beats(current) { return false }
        byDistance[key] = record
        return true
    }

    /// Folds one run's best efforts (as `bestEfforts` returns them; nils are skipped).
    /// Returns the distances on which this run set a new record, in the order given.
    @discardableResult
    public mutating func add(runID: Int64, efforts: [BestEffort?]) -> [RecordDistance] {
        var improved: [RecordDistance] = []
        for case let effort? in efforts {
            if add(PersonalRecord(runID: runID, effort: effort)) { improved.append(effort.distance) }
        }
        return improved
    }

    // MARK: - Per-run sweep

    /// The best effort for each of `distances` inside one run, in the same order; nil where the run
    /// is shorter than the distance (or the distance is not a positive finite number).
    ///
    /// `samples` must be in time order, as the tracker emitted them. Cumulative distance is expected
    /// never to decrease; if it does (a corrupt row) it is read as its running maximum, so the sweep
    /// stays correct and the stretch simply includes the glitch. Samples whose distance is not finite
    /// are skipped. A stretch whose elapsed time is not positive (timestamps out of order) is never
    /// a record.
    public static func bestEfforts(
        in samples: [EffortSample], for distances: [RecordDistance] = RecordDistance.standard
    ) -> [BestEffort?] {
        guard let track = EffortTrack(samples) else { return distances.map { _ in nil } }
        return distances.map { track.bestEffort(for: $0) }
    }

    /// `bestEfforts(in:for:)` for one distance.
    public static func bestEffort(in samples: [EffortSample], for distance: RecordDistance) -> BestEffort? {
        EffortTrack(samples)?.bestEffort(for: distance)
    }
}
