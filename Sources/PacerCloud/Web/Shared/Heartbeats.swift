import CloudModel
import CloudStore
import Foundation
import PacerContract

/// The devices' stored heartbeats (`PUT /v1/device/state`), decoded: what the position, alert
/// and sync routes check of a device, and where the heart-rate pages find a maximum.
struct Heartbeats: Sendable {
    let sync: SyncRepository

    /// The device's stored heartbeat, decoded (nil: none yet).
    func stored(_ deviceID: String) async throws -> DeviceState? {
        try await sync.deviceState(device: deviceID).flatMap { try? JSONDecoder().decode(DeviceState.self, from: Data($0.json.utf8)) }
    }

    /// The newest heartbeat of each of the devices.
    func newest(of devices: [Device]) async throws -> [(state: DeviceState, receivedMs: Int64)] {
        var states: [(state: DeviceState, receivedMs: Int64)] = []
        for device in devices {
            guard let stored = try await sync.deviceState(device: device.id),
                  let state = try? JSONDecoder().decode(DeviceState.self, from: Data(stored.json.utf8)) else { continue }
            states.append((state, stored.receivedMs))
        }
        return states
    }
}

/// The heart-rate zones' maximum: the account's own setting, else the newest `max_hr_bpm` its
/// devices sent, else the default.
enum ZoneMaximum {
    /// Where the zones' maximum heart rate comes from.
    enum Source: Equatable {
        case account, device, standard
    }

    /// From the account and its devices' heartbeats (`Heartbeats.newest`).
    static func of(_ account: Account, states: [(state: DeviceState, receivedMs: Int64)]) -> (Int, Source) {
        if let own = account.maxHeartRate { return (own, .account) }
        let sent = states.compactMap { entry in entry.state.max_hr_bpm.map { (bpm: $0, receivedMs: entry.receivedMs) } }
        if let newest = sent.max(by: { $0.receivedMs < $1.receivedMs }) { return (newest.bpm, .device) }
        return (HeartRateZones.defaultMaximum, .standard)
    }
}
