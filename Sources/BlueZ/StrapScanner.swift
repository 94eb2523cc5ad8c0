import Systemd

/// A heart-rate device BlueZ sees, as `pacerctl strap scan` lists it.
public struct DiscoveredStrap: Sendable, Equatable {
    public var address: StrapAddress
    public var name: String?
    /// dBm; nil when BlueZ has not heard it during this scan.
    public var rssi: Int?
    public var paired: Bool
    public var connected: Bool

    public init(address: StrapAddress, name: String?, rssi: Int?, paired: Bool, connected: Bool) {
        self.address = address
        self.name = name
        self.rssi = rssi
        self.paired = paired
        self.connected = connected
    }
}

public struct StrapScanError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
}

/// Lists the heart-rate straps in range: discovery filtered to the Heart Rate service over LE,
/// for `duration`, then every device object with that service. Uses its own bus connection,
/// since BlueZ keeps one discovery session per client and stopping this one must not stop the
/// strap client's.
public enum StrapScanner {
    public static func scan(bus: BusConnection, adapter: String? = nil, duration: Duration) async throws(StrapScanError) -> [DiscoveredStrap] {
        func fail(_ what: String, _ error: BusError) -> StrapScanError {
            StrapScanError(description: error.isServiceUnknown ? "bluetoothd is not running" : "\(what): \(error)")
        }
        let before: BlueZObjects
        do {
            before = BlueZObjects(objects: try await bus.managedObjects(service: BlueZNames.service, timeout: .seconds(5)))
        } catch { throw fail("cannot list BlueZ's objects", error) }
        guard let adapterPath = before.adapterPath(named: adapter) else {
            throw StrapScanError(description: adapter.map { "no Bluetooth adapter \($0)" } ?? "no Bluetooth adapter")
        }
        let filter = BusValue.dictionary(["UUIDs": .strings([BlueZNames.heartRateService]), "Transport": .string("le")])
        do {
            _ = try await bus.call(BusMethodCall(destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "SetDiscoveryFilter", arguments: [filter]), timeout: .seconds(5))
            _ = try await bus.call(BusMethodCall(destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "StartDiscovery"), timeout: .seconds(5))
        } catch { throw fail("cannot start discovery", error) }
        try? await Task.sleep(for: duration)
        let after: BlueZObjects
        do {
            after = BlueZObjects(objects: try await bus.managedObjects(service: BlueZNames.service, timeout: .seconds(5)))
        } catch { throw fail("cannot list BlueZ's objects", error) }
        _ = try? await bus.call(BusMethodCall(destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "StopDiscovery"), timeout: .seconds(5))
        return after.heartRateDevices(under: adapterPath).compactMap { _, properties in
            guard let address = properties["Address"]?.stringValue.flatMap(StrapAddress.init) else { return nil }
            return DiscoveredStrap(address: address, name: properties["Alias"]?.stringValue ?? properties["Name"]?.stringValue,
                                   rssi: properties["RSSI"]?.integerValue, paired: properties["Paired"]?.boolValue ?? false,
                                   connected: properties["Connected"]?.boolValue ?? false)
        }.sorted { ($0.rssi ?? -1000, $1.address) > ($1.rssi ?? -1000, $0.address) }
    }
}
