/// One thing to say, decided by the core at a sample's time.
public struct Cue: Sendable, Equatable {
    /// The sample time that triggered it (GPS time, or the strap's timebase).
    public var time: Timestamp
    public var kind: CueKind
    /// The sentence as it is to be spoken ("5 minutes 12 seconds per kilometre", never "5:12/km").
    public var text: String

    public init(time: Timestamp, kind: CueKind, text: String) {
        self.time = time
        self.kind = kind
        self.text = text
    }

    public var priority: CuePriority { kind.priority }
}
