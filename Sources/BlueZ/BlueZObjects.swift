import Systemd

/// Finding things in BlueZ's object tree (GetManagedObjects).
struct BlueZObjects {
    let objects: BusConnection.ManagedObjects

    /// `/org/bluez/hci0` for `hci0`, or the first adapter by path when `name` is nil.
    func adapterPath(named name: String?) -> String? {
        let adapters = objects.filter { $0.value[BlueZNames.adapter] != nil }.keys.sorted()
        guard let name else { return adapters.first }
        return adapters.first { $0.hasSuffix("/" + name) }
    }

    func adapterProperties(_ path: String) -> [String: BusValue]? { objects[path]?[BlueZNames.adapter] }

    func device(_ path: String) -> [String: BusValue]? { objects[path]?[BlueZNames.device] }

    /// The Heart Rate Measurement characteristic of the device at `devicePath`: 0x2A37 inside a
    /// 0x180D service that belongs to that device.
    func heartRateCharacteristic(device devicePath: String) -> String? {
        characteristic(BlueZNames.heartRateMeasurement, inService: BlueZNames.heartRateService, device: devicePath)
    }

    func batteryCharacteristic(device devicePath: String) -> String? {
        characteristic(BlueZNames.batteryLevel, inService: BlueZNames.batteryService, device: devicePath)
    }

    private func characteristic(_ uuid: String, inService serviceUUID: String, device devicePath: String) -> String? {
        let services = Set(objects.compactMap { path, interfaces -> String? in
            guard let service = interfaces[BlueZNames.gattService],
                  service["UUID"]?.stringValue?.lowercased() == serviceUUID,
                  service["Device"]?.stringValue == devicePath else { return nil }
            return path
        })
        return objects.compactMap { path, interfaces -> String? in
            guard let characteristic = interfaces[BlueZNames.gattCharacteristic],
                  characteristic["UUID"]?.stringValue?.lowercased() == uuid,
                  let service = characteristic["Service"]?.stringValue, services.contains(service) else { return nil }
            return path
        }.sorted().first
    }

    /// Devices under `adapterPath` that advertise the Heart Rate service.
    func heartRateDevices(under adapterPath: String) -> [(path: String, properties: [String: BusValue])] {
        objects.compactMap { path, interfaces in
            guard let device = interfaces[BlueZNames.device], device["Adapter"]?.stringValue == adapterPath,
                  let uuids = device["UUIDs"]?.stringArrayValue,
                  uuids.contains(where: { $0.lowercased() == BlueZNames.heartRateService }) else { return nil }
            return (path, device)
        }.sorted { $0.path < $1.path }
    }
}
