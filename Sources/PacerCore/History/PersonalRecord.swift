/// An all-time record: the best effort for one distance and the run it came from.
public struct PersonalRecord: Sendable, Equatable {
    /// Opaque to the core: whatever id the Store gives the run.
    public var runID: Int64
    public var effort: BestEffort

    public init(runID: Int64, effort: BestEffort) {
        self.runID = runID
        self.effort = effort
    }

    /// Whether `self` should replace `other` as the record.
    ///
    /// Faster wins. Ties (same duration to the last bit) go to the earlier effort, then to the lower
    /// run id, so folding the same runs in any order gives the same records: the Store can rebuild
    /// them after deleting a run without caring about row order.
    public func beats(_ other: PersonalRecord) -> Bool {
        if effort.duration != other.effort.duration { return effort.duration < other.effort.duration }
        if effort.start != other.effort.start { return effort.start < other.effort.start }
        return runID < other.runID
    }
}
