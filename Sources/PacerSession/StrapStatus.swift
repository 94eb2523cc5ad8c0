import PacerCore

/// The heart-rate strap as `pacerctl status` and STATUS= show it. A heart rate appears only
/// while it is live; no data and no skin contact are states of the sensor, not readings.
public struct StrapStatus: Sendable, Equatable {
    public enum Link: String, Sendable {
        case notPaired = "not_paired"
        case bluetoothUnavailable = "bluetooth_unavailable"
        /// Paired, not in range (discovering), or connects failing.
        case searching
        case connected
        /// Was connected; reconnecting.
        case lost
    }

    public var link: Link = .notPaired
    public var address: String?
    public var name: String?
    public var batteryPercent: Int?
    public var reading: HeartRateReading = .disconnected
    /// The last bpm the strap gave and its age in seconds, whatever it is now.
    public var lastBpm: Int?
    public var lastBpmAge: Double?
    /// Why it is not connected, in BlueZ's words.
    public var problem: String?
    public var malformedPackets = 0

    public init() {}

    public var readingName: String {
        switch reading {
        case .disconnected: "disconnected"
        case .noData: "no_data"
        case .noContact: "no_contact"
        case .stale: "stale"
        case .live: "live"
        }
    }

    public var liveBpm: Int? {
        if case .live(let bpm, _, _) = reading { return bpm }
        return nil
    }

    /// Equal but for the figures that change with every notification.
    public func sameState(as other: StrapStatus) -> Bool {
        link == other.link && address == other.address && readingName == other.readingName && batteryPercent == other.batteryPercent
    }

    /// The status line's part, e.g. "HR 142", "HR strap not paired", "HR no skin contact".
    public var text: String {
        switch link {
        case .notPaired: return "HR strap not paired"
        case .bluetoothUnavailable: return "HR: Bluetooth unavailable"
        case .searching: return "HR strap not found"
        case .lost: return "HR strap lost, reconnecting"
        case .connected:
            switch reading {
            case .live(let bpm, _, _): return "HR \(bpm)"
            case .noContact: return "HR no skin contact"
            case .stale: return "HR no recent data"
            case .noData, .disconnected: return "HR no data"
            }
        }
    }
}
