/// A notice queued for a device (`pacer-cloud notice send`), said once there and then marked
/// delivered by the device's acknowledgement.
public struct StoredNotice: Sendable, Equatable {
    /// A lowercase UUID.
    public var id: String
    public var device: String
    public var text: String
    public var createdMs: Int64
    public var deliveredMs: Int64?

    public init(id: String, device: String, text: String, createdMs: Int64, deliveredMs: Int64? = nil) {
        self.id = id
        self.device = device
        self.text = text
        self.createdMs = createdMs
        self.deliveredMs = deliveredMs
    }
}

/// A device's newest heartbeat as stored: when it arrived, and its body (canonical JSON).
public struct StoredDeviceState: Sendable, Equatable {
    public var receivedMs: Int64
    public var json: String

    public init(receivedMs: Int64, json: String) {
        self.receivedMs = receivedMs
        self.json = json
    }
}
