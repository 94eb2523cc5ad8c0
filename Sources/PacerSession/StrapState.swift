import PacerCore

/// What the heart-rate strap client reports, addresses as text: BlueZ's events without BlueZ.
/// Notifications go to `StrapState.notification` instead.
public enum StrapSignal: Sendable, Equatable {
    /// No bluetoothd on the bus, or no adapter.
    case unavailable(reason: String)
    /// Looking for the paired strap, which is not in range yet.
    case searching(address: String)
    case connectFailed(address: String, reason: String)
    case connected(address: String, name: String)
    case battery(address: String, percent: Int)
    case disconnected(address: String, reason: String)
}

/// Which straps are looked for, and why (the pure side of the daemon's StrapChoice).
public struct StrapSelection: Sendable, Equatable {
    public enum Source: Sendable {
        case config, paired, none
    }

    public var straps: [String]
    public var source: Source
    public var adapter: String?

    public init(straps: [String], source: Source, adapter: String?) {
        self.straps = straps
        self.source = source
        self.adapter = adapter
    }
}

/// The heart-rate strap as the daemon knows it: the link, why it is down, the sensor's reading
/// and the last bpm. Its clock is CLOCK_MONOTONIC (a notification's receipt), which exists
/// before the first fix and never jumps. Each change returns what the journal hears of it:
/// a problem retried every second is said once, not every time.
public struct StrapState: Sendable {
    public private(set) var selection = StrapSelection(straps: [], source: .none, adapter: nil)
    public private(set) var sensor = HeartRateSensor()
    private var link: StrapStatus.Link = .notPaired
    private var problem: String?
    private var lastBpmReceived: (bpm: Int, receivedNs: UInt64)?
    private var lowBatteryReported = false

    public init() {}

    /// The last valid bpm the strap gave, however old.
    public var lastBpm: Int? { lastBpmReceived?.bpm }

    /// Another choice of straps: whatever was known of the old one is forgotten.
    public mutating func select(_ newSelection: StrapSelection) -> SessionNote? {
        guard newSelection != selection else { return nil }
        selection = newSelection
        sensor.disconnected()
        problem = nil
        lastBpmReceived = nil
        if newSelection.straps.isEmpty {
            link = .notPaired
            return SessionNote(.notice, "hr", "no heart-rate strap paired: pair one with `pacerctl strap pair ADDRESS` or set [hr] strap")
        }
        link = .searching
        let which = newSelection.straps.joined(separator: ", then ")
        return SessionNote(.info, "hr", "looking for the heart-rate strap \(which) (\(newSelection.source == .config ? "[hr] in the config" : "paired with pacerctl"))")
    }

    /// A change the strap client reports. `lowBatteryPercent` is the coach's threshold; the
    /// journal hears of a low battery once per connection.
    public mutating func handle(_ signal: StrapSignal, runID: Int64?, lowBatteryPercent: Int) -> SessionNote? {
        switch signal {
        case .unavailable(let reason):
            if link == .connected { sensor.disconnected() }
            defer {
                link = .bluetoothUnavailable
                problem = reason
            }
            return problem != reason ? SessionNote(.warning, "hr", "heart rate unavailable: \(reason); retrying", runID: runID) : nil
        case .searching(let address):
            defer { notConnected(because: "not in range") }
            return problem != "not in range" ? SessionNote(.info, "hr", "heart-rate strap \(address) is not in range; discovering", runID: runID) : nil
        case .connectFailed(let address, let reason):
            defer { notConnected(because: reason) }
            return problem != reason ? SessionNote(.info, "hr", "cannot connect to the heart-rate strap \(address): \(reason); retrying", runID: runID) : nil
        case .connected(let address, let name):
            sensor.connected(name: name, address: address)
            let after = link == .lost ? " again" : ""
            link = .connected
            problem = nil
            lowBatteryReported = false
            return SessionNote(.notice, "hr", "heart-rate strap \(name) (\(address)) connected\(after)", runID: runID)
        case .battery(let address, let percent):
            sensor.battery(percent)
            guard percent <= lowBatteryPercent, !lowBatteryReported else { return nil }
            lowBatteryReported = true
            return SessionNote(.warning, "hr", "heart-rate strap \(address) battery low: \(percent) %", runID: runID)
        case .disconnected(let address, let reason):
            sensor.disconnected()
            link = .lost
            problem = reason
            return SessionNote(.warning, "hr", "heart-rate strap \(address) disconnected (\(reason)); reconnecting", runID: runID)
        }
    }

    /// Searching or failing to connect: a strap that was connected stays "lost" until it is back.
    private mutating func notConnected(because reason: String) {
        if link != .lost { link = .searching }
        problem = reason
    }

    /// One Heart Rate Measurement value, decoded by the sensor. A malformed one is counted, and
    /// the journal hears of the first and then every 100th: a faulty strap must not flood it.
    public mutating func notification(_ value: [UInt8], receivedNs: UInt64, runID: Int64?)
        -> (result: Result<HeartRateMeasurement, HeartRateMeasurementError>, note: SessionNote?) {
        let time = Self.monotonicTime(receivedNs)
        let result = sensor.notification(value, at: time)
        switch result {
        case .success(let measurement):
            if measurement.sample(at: time).isValid { lastBpmReceived = (measurement.bpm, receivedNs) }
            return (result, nil)
        case .failure(let error):
            guard sensor.malformedCount == 1 || sensor.malformedCount % 100 == 0 else { return (result, nil) }
            return (result, SessionNote(.warning, "hr", "the strap sent a malformed heart-rate packet (\(error)); ignored (\(sensor.malformedCount) so far): \(HexBytes.string(value))", runID: runID))
        }
    }

    public func status(nowNs: UInt64) -> StrapStatus {
        var status = StrapStatus()
        status.link = selection.straps.isEmpty ? .notPaired : link
        status.address = sensor.address ?? selection.straps.first
        status.name = sensor.name
        status.batteryPercent = sensor.batteryPercent
        status.reading = sensor.reading(at: Self.monotonicTime(nowNs))
        if let lastBpmReceived {
            status.lastBpm = lastBpmReceived.bpm
            status.lastBpmAge = Double(nowNs &- lastBpmReceived.receivedNs) / 1e9
        }
        status.problem = status.link == .connected ? nil : problem
        status.malformedPackets = sensor.malformedCount
        return status
    }

    /// CLOCK_MONOTONIC nanoseconds as the millisecond Timestamp the sensor and the SOS lane use.
    public static func monotonicTime(_ ns: UInt64) -> Timestamp {
        Timestamp(milliseconds: Int64(ns / 1_000_000))
    }
}
