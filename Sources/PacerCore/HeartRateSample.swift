/// One heart-rate notification from a strap (BLE 0x2A37), stamped on the run's timeline.
public struct HeartRateSample: Sendable, Equatable {
    public var time: Timestamp
    /// Beats per minute; 0 when the strap reports no skin contact.
    public var bpm: Int
    /// RR intervals in milliseconds, oldest first.
    public var rrIntervalsMs: [Double]
    /// nil when the strap does not support contact detection.
    public var contact: Bool?

    public init(time: Timestamp, bpm: Int, rrIntervalsMs: [Double] = [], contact: Bool? = nil) {
        self.time = time
        self.bpm = bpm
        self.rrIntervalsMs = rrIntervalsMs
        self.contact = contact
    }

    /// A reading that describes the heart, not the sensor: contact not denied and a plausible value.
    public var isValid: Bool { contact != false && bpm > 0 }
}
