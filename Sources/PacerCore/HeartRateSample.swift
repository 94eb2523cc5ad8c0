/// One heart-rate notification from a strap (BLE 0x2A37), stamped on the run's timeline.
public struct HeartRateSample: Sendable, Equatable {
    public var time: Timestamp
    /// Beats per minute; 0 when the strap reports no skin contact.
    public var bpm: Int
    /// RR intervals in milliseconds, oldest first.
    public var rrIntervalsMs: [Double]
    /// nil when the strap does not support contact detection.
    public var contact: Bool?
    /// Which strap sent it (its address), where more than one may: the SOS rules never mix two
    /// straps' readings in one judgement. nil: the one strap.
    public var strap: String?

    public init(time: Timestamp, bpm: Int, rrIntervalsMs: [Double] = [], contact: Bool? = nil, strap: String? = nil) {
        self.time = time
        self.bpm = bpm
        self.rrIntervalsMs = rrIntervalsMs
        self.contact = contact
        self.strap = strap
    }

    /// Above this a reading is an artefact, not a heart (the fastest recorded human rates are
    /// about 250 bpm at most in adults, far more only in infants).
    public static let maximumPlausibleBpm = 250

    /// A reading that describes the heart, not the sensor: contact not denied and a plausible value.
    public var isValid: Bool { contact != false && bpm > 0 && bpm <= Self.maximumPlausibleBpm }

    /// The strap says it reads no heart: no skin contact, or 0 bpm. (An implausible value is
    /// neither a heart nor a lost signal: the strap is talking, with an artefact.)
    public var isSignalLoss: Bool { contact == false || bpm <= 0 }
}
