/// The heart-rate strap's state as the pipeline reads it: a pure value, fed connection changes,
/// raw notifications and battery readings with their times, and asked for a reading at a time.
///
/// A measurement belongs to its connection: connecting or disconnecting forgets it (and the
/// battery level), so a reconnected strap starts from `.noData`. The counts span connections.
public struct HeartRateSensor: Sendable, Equatable {
    /// A notification older than this (seconds) no longer counts as current.
    public var staleAfter: Double

    public private(set) var isConnected = false
    public private(set) var name: String?
    public private(set) var address: String?
    /// Battery Level 0–100 %, from the connected strap; nil until it reports one.
    public private(set) var batteryPercent: Int?

    /// Every notification received, well-formed or not.
    public private(set) var notificationCount = 0
    /// Notifications rejected by `HeartRateMeasurement.decode`.
    public private(set) var malformedCount = 0
    /// Why the most recent malformed notification was rejected.
    public private(set) var lastError: HeartRateMeasurementError?

    /// The latest well-formed notification of this connection and its arrival time.
    public private(set) var lastMeasurement: HeartRateMeasurement?
    public private(set) var lastMeasurementTime: Timestamp?

    public init(staleAfter: Double = 5) {
        self.staleAfter = staleAfter
    }

    public mutating func connected(name: String?, address: String) {
        forgetConnection()
        isConnected = true
        self.name = name
        self.address = address
    }

    public mutating func disconnected() {
        forgetConnection()
        isConnected = false
    }

    /// One 0x2A37 value as it arrived at `time`. A malformed one is counted and otherwise ignored
    /// (the last good measurement stays). One arriving while disconnected is counted, not kept.
    @discardableResult
    public mutating func notification(_ bytes: some Collection<UInt8>, at time: Timestamp) -> Result<HeartRateMeasurement, HeartRateMeasurementError> {
        notificationCount += 1
        let result = HeartRateMeasurement.decode(bytes)
        switch result {
        case .success(let measurement):
            if isConnected {
                lastMeasurement = measurement
                lastMeasurementTime = time
            }
        case .failure(let error):
            malformedCount += 1
            lastError = error
        }
        return result
    }

    /// A battery percentage from the connected strap; values outside 0–100 are ignored.
    public mutating func battery(_ percent: Int) {
        guard isConnected, (0...100).contains(percent) else { return }
        batteryPercent = percent
    }

    /// The state at `now`. A `now` before the last notification counts as age 0.
    public func reading(at now: Timestamp) -> HeartRateReading {
        guard isConnected else { return .disconnected }
        guard let measurement = lastMeasurement, let time = lastMeasurementTime else { return .noData }
        let age = max(0, now.seconds(since: time))
        let sample = measurement.sample(at: time)
        if age > staleAfter {
            return sample.isValid ? .stale(lastBpm: sample.bpm, age: age) : .noData
        }
        if sample.isValid { return .live(bpm: sample.bpm, rrIntervalsMs: sample.rrIntervalsMs, age: age) }
        return sample.contact == false ? .noContact(age: age) : .noData
    }

    private mutating func forgetConnection() {
        name = nil
        address = nil
        batteryPercent = nil
        lastMeasurement = nil
        lastMeasurementTime = nil
    }
}
