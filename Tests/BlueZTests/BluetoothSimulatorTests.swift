import Foundation
import PacerTestSupport
import Testing

/// The simulated bluetoothd (tools/bluez-sim) on a private dbus-daemon, driven and watched only
/// with busctl and gdbus: what a BlueZ client will see of it. Serialized: the 4 Hz test measures
/// timing and wants a quiet machine.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct BluetoothSimulatorTests {
    /// Random static addresses (top two bits set), as LE straps use.
    static let strap = "C4:7D:9A:12:34:56"
    static let newStrap = "E8:21:0F:AA:00:01"
    static let farStrap = "E8:21:0F:AA:00:02"
    static let silentStrap = "E8:21:0F:AA:00:03"
    static let heartRate = "0000180d-0000-1000-8000-00805f9b34fb"
    static let battery = "0000180f-0000-1000-8000-00805f9b34fb"
    static let measurement = "00002a37-0000-1000-8000-00805f9b34fb"

    static func knownStrap(inRange: Bool = true) -> BluetoothSimulator.Strap {
        .init(address: strap, name: "Polar H10 7D3A1B2C", rssi: -58, battery: 85, inRange: inRange)
    }

    @Test func managedObjectsShowTheAdapterAndAKnownStrap() async throws {
        let objects = try await offPool { () -> [String: JSON] in
            let sim = try BluetoothSimulator(.init(straps: [Self.knownStrap()]))
            defer { sim.close() }
            return try managedObjects(sim)
        }
        let adapter = objects["/org/bluez/hci0"]?["org.bluez.Adapter1"]
        #expect(adapter?["Powered"] == variant("b", .bool(true)))
        #expect(adapter?["Discovering"] == variant("b", .bool(false)))
        #expect(adapter?["AddressType"]?["data"]?.string == "public")
        #expect(objects["/org/bluez"]?["org.bluez.AgentManager1"] != nil)
        #expect(objects["/org/bluez"]?["org.bluez.ProfileManager1"] != nil)

        let device = objects[BluetoothSimulator.devicePath(Self.strap)]?["org.bluez.Device1"]
        #expect(device?["Address"] == variant("s", .string(Self.strap)))
        #expect(device?["AddressType"] == variant("s", .string("random")))
        #expect(device?["Appearance"] == variant("q", .number(0x0341)))
        #expect(device?["Paired"] == variant("b", .bool(true)))
        #expect(device?["Connected"] == variant("b", .bool(false)))
        #expect(device?["ServicesResolved"] == variant("b", .bool(false)))
        #expect(device?["Adapter"] == variant("o", .string("/org/bluez/hci0")))
        let uuids = device?["UUIDs"]?["data"]?.array?.compactMap(\.string) ?? []
        #expect(uuids.contains(Self.heartRate) && uuids.contains(Self.battery), "\(uuids)")
        // RSSI exists only while the strap is being discovered, as in BlueZ.
        #expect(device?["RSSI"] == nil)
        // No GATT objects while disconnected.
        #expect(!objects.keys.contains { $0.hasPrefix(BluetoothSimulator.devicePath(Self.strap) + "/") })
    }

    @Test func discoveryWithAFilterFindsAnInRangeStrapWithItsRSSI() async throws {
        let (found, stopped, messages, afterStop) = try await offPool { () -> (Bool, Bool, [BusMessage], [BusMessage]) in
            // Shared sessions: gdbus leaves the bus after each call.
            let sim = try BluetoothSimulator(.init(straps: [Self.knownStrap()], trackClients: false))
            defer { sim.close() }
            try sim.addStrap(address: Self.newStrap, name: "TICKR 0A1B", rssi: -55)
            try sim.addStrap(address: Self.farStrap, name: "TICKR far", rssi: -95)
            try sim.addStrap(address: Self.silentStrap, name: "TICKR off", rssi: -50)
            try sim.setInRange(address: Self.silentStrap, false)
            let monitor = try BusMonitor(address: sim.address, names: ["org.bluez"])
            defer { monitor.stop() }
            try gdbus(sim, "/org/bluez/hci0", "org.bluez.Adapter1.SetDiscoveryFilter",
                      "{'UUIDs': <['\(Self.heartRate)']>, 'Transport': <'le'>, 'RSSI': <int16 -80>}").check()
            try gdbus(sim, "/org/bluez/hci0", "org.bluez.Adapter1.StartDiscovery").check()
            let found = monitor.wait { added($0, BluetoothSimulator.devicePath(Self.newStrap)) != nil }
            // Long enough for the others' adverts too, had they matched.
            usleep(400_000)
            let seen = monitor.messages()
            try gdbus(sim, "/org/bluez/hci0", "org.bluez.Adapter1.StopDiscovery").check()
            // The simulator announces Discovering false first and invalidates the straps' RSSI
            // after it: wait for both, or the invalidation may not have arrived yet.
            let stopped = monitor.wait { messages in
                messages.contains { property($0, "/org/bluez/hci0", "org.bluez.Adapter1", "Discovering") == .bool(false) }
                    && messages.contains { rssiInvalidated($0, BluetoothSimulator.devicePath(Self.newStrap)) }
            }
            return (found.satisfied, stopped.satisfied, seen, stopped.messages)
        }
        #expect(found)
        #expect(stopped)
        #expect(changed(messages, "/org/bluez/hci0", "org.bluez.Adapter1", "Discovering") == .bool(true))
        let device = added(messages, BluetoothSimulator.devicePath(Self.newStrap))?["org.bluez.Device1"]
        #expect(device?["RSSI"] == variant("n", .number(-55)))
        #expect(device?["Paired"] == variant("b", .bool(false)))
        #expect(device?["Name"] == variant("s", .string("TICKR 0A1B")))
        // The known strap was already an object: it gets its RSSI by PropertiesChanged.
        #expect(changed(messages, BluetoothSimulator.devicePath(Self.strap), "org.bluez.Device1", "RSSI") == .number(-58))
        // Below the RSSI threshold, and out of range: never reported.
        #expect(added(messages, BluetoothSimulator.devicePath(Self.farStrap)) == nil)
        #expect(added(messages, BluetoothSimulator.devicePath(Self.silentStrap)) == nil)
        // When discovery stops, RSSI is invalidated.
        #expect(afterStop.contains { rssiInvalidated($0, BluetoothSimulator.devicePath(Self.newStrap)) })
    }

    /// A PropertiesChanged of `path`'s Device1 that invalidates its RSSI.
    private func rssiInvalidated(_ message: BusMessage, _ path: String) -> Bool {
        message.isSignal("org.freedesktop.DBus.Properties", "PropertiesChanged") && message.path == path
            && (message.arguments[safe: 2]?.array ?? []).contains(.string("RSSI"))
    }

    /// BlueZ ties a discovery session to the client that started it: busctl leaves the bus at
    /// once, and discovery stops with it.
    @Test func discoveryEndsWhenItsClientLeavesTheBus() async throws {
        let (satisfied, messages) = try await offPool { () -> (Bool, [BusMessage]) in
            let sim = try BluetoothSimulator(.init(straps: [Self.knownStrap()]))
            defer { sim.close() }
            let monitor = try BusMonitor(address: sim.address, names: ["org.bluez"])
            defer { monitor.stop() }
            try busctl(sim, "/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery").check()
            return monitor.wait { messages in
                let values = messages.compactMap { property($0, "/org/bluez/hci0", "org.bluez.Adapter1", "Discovering") }
                return values == [.bool(true), .bool(false)]
            }
        }
        #expect(satisfied, "\(messages)")
    }

    @Test func connectCreatesTheGATTObjectsThenResolvesServices() async throws {
        let device = BluetoothSimulator.devicePath(Self.strap)
        let characteristic = BluetoothSimulator.heartRateMeasurementPath(Self.strap)
        let (reply, done, messages, objects) = try await offPool { () -> (CommandResult, Bool, [BusMessage], [String: JSON]) in
            let sim = try BluetoothSimulator(.init(straps: [Self.knownStrap()]))
            defer { sim.close() }
            let monitor = try BusMonitor(address: sim.address, names: ["org.bluez"])
            defer { monitor.stop() }
            let reply = try gdbus(sim, device, "org.bluez.Device1.Connect")
            // Battery1 comes last, once the battery plugin has read the level.
            let done = monitor.wait { added($0, device)?["org.bluez.Battery1"] != nil }
            return (reply, done.satisfied, done.messages, try managedObjects(sim))
        }
        #expect(reply.succeeded, "\(reply)")
        #expect(done)
        let signals = messages.filter { $0.type == "signal" }
        let connectedAt = signals.firstIndex { property($0, device, "org.bluez.Device1", "Connected") == .bool(true) }
        let characteristicAt = signals.firstIndex { ($0.arguments.first?.string) == characteristic && $0.member == "InterfacesAdded" }
        let resolvedAt = signals.firstIndex { property($0, device, "org.bluez.Device1", "ServicesResolved") == .bool(true) }
        #expect(connectedAt != nil && characteristicAt != nil && resolvedAt != nil)
        if let connectedAt, let characteristicAt, let resolvedAt {
            #expect(connectedAt < characteristicAt && characteristicAt < resolvedAt)
        }

        let service = added(messages, device + "/service000c")?["org.bluez.GattService1"]
        #expect(service?["UUID"] == variant("s", .string(Self.heartRate)))
        #expect(service?["Primary"] == variant("b", .bool(true)))
        #expect(service?["Device"] == variant("o", .string(device)))
        let hrm = added(messages, characteristic)?["org.bluez.GattCharacteristic1"]
        #expect(hrm?["UUID"] == variant("s", .string(Self.measurement)))
        #expect(hrm?["Service"] == variant("o", .string(device + "/service000c")))
        #expect(hrm?["Flags"] == variant("as", .array([.string("notify")])))
        #expect(hrm?["Notifying"] == variant("b", .bool(false)))
        #expect(hrm?["Value"]?["type"]?.string == "ay")
        #expect(hrm?["Handle"]?["type"]?.string == "q")
        let batteryLevel = added(messages, BluetoothSimulator.batteryLevelPath(Self.strap))?["org.bluez.GattCharacteristic1"]
        #expect(batteryLevel?["Flags"] == variant("as", .array([.string("read"), .string("notify")])))
        #expect(added(messages, device)?["org.bluez.Battery1"]?["Percentage"] == variant("y", .number(85)))

        #expect(objects[characteristic]?["org.bluez.GattCharacteristic1"] != nil)
        #expect(objects[device]?["org.bluez.Device1"]?["ServicesResolved"] == variant("b", .bool(true)))
        #expect(objects[device]?["org.bluez.Battery1"]?["Percentage"] == variant("y", .number(85)))
    }

    /// 5 s at 4 Hz: every measurement arrives, its RR field counting 0, 1, 2… with no gap, its
    /// heart rate cycling through the given values, and the rate held.
    @Test func aStreamAt4HzDeliversEverySequenceNumber() async throws {
        let bpm: [UInt16] = [60, 61, 62, 63]
        let (values, times, stats) = try await offPool { () -> ([[Int]], [UInt64], BluetoothSimulator.Stats) in
            let sim = try BluetoothSimulator(.init(straps: [Self.knownStrap()], trackClients: false))
            defer { sim.close() }
            let characteristic = BluetoothSimulator.heartRateMeasurementPath(Self.strap)
            try gdbus(sim, BluetoothSimulator.devicePath(Self.strap), "org.bluez.Device1.Connect").check()
            try gdbus(sim, characteristic, "org.bluez.GattCharacteristic1.StartNotify").check()
            let monitor = try BusMonitor(address: sim.address, names: ["org.bluez"])
            defer { monitor.stop() }
            try sim.startStream(address: Self.strap, rateHz: 4, bpm: bpm)
            usleep(5_000_000)
            try sim.stopStream(address: Self.strap)
            let stats = try sim.stats(address: Self.strap)
            let done = monitor.wait { notifications($0, characteristic).count >= Int(stats.streamSent) }
            let received = notifications(done.messages, characteristic)
            return (received.map(\.value), received.map(\.time), stats)
        }
        #expect((19...21).contains(values.count), "\(values.count) notifications in 5 s")
        #expect(stats.streamSent == UInt32(values.count))
        #expect(stats.skipped == 0)
        #expect(stats.nextSequence == stats.streamSent)
        for (index, value) in values.enumerated() {
            #expect(value.count == 4 && value[0] == 0x10, "notification \(index): \(value)")
            guard value.count == 4 else { continue }
            let sequence = value[2] | value[3] << 8
            #expect(sequence == index, "notification \(index) carries \(sequence)")
            #expect(value[1] == Int(bpm[sequence % bpm.count]))
        }
        if times.count > 2, let first = times.first, let last = times.last {
            let period = Double(last - first) / Double(times.count - 1) / 1000
            #expect(abs(period - 250) < 5, "mean period \(period) ms")
            let worst = zip(times, times.dropFirst()).map { abs(Double($1 - $0) / 1000 - 250) }.max() ?? 0
            #expect(worst < 60, "an interval was \(worst) ms off")
        }
    }

    /// Measurements while the link is down use their sequence numbers, so the gap a client sees
    /// is exactly what it missed.
    @Test func aDroppedLinkLeavesAGapOfExactlyTheSkippedMeasurements() async throws {
        let (sequences, stats) = try await offPool { () -> ([Int], BluetoothSimulator.Stats) in
            let sim = try BluetoothSimulator(.init(straps: [Self.knownStrap()], trackClients: false))
            defer { sim.close() }
            let device = BluetoothSimulator.devicePath(Self.strap)
            let characteristic = BluetoothSimulator.heartRateMeasurementPath(Self.strap)
            let monitor = try BusMonitor(address: sim.address, names: ["org.bluez"])
            defer { monitor.stop() }
            try gdbus(sim, device, "org.bluez.Device1.Connect").check()
            try gdbus(sim, characteristic, "org.bluez.GattCharacteristic1.StartNotify").check()
            try sim.startStream(address: Self.strap, rateHz: 20, bpm: [150])
            usleep(600_000)
            try sim.dropLink(address: Self.strap)
            usleep(500_000)
            try gdbus(sim, device, "org.bluez.Device1.Connect").check()
            // The GATT objects are new: notifications must be asked for again.
            try gdbus(sim, characteristic, "org.bluez.GattCharacteristic1.StartNotify").check()
            usleep(600_000)
            try sim.stopStream(address: Self.strap)
            let stats = try sim.stats(address: Self.strap)
            let done = monitor.wait { notifications($0, characteristic).count >= Int(stats.streamSent) }
            let sequences = notifications(done.messages, characteristic).map { $0.value[2] | $0.value[3] << 8 }
            return (sequences, stats)
        }
        let gaps = zip(sequences, sequences.dropFirst()).filter { $1 != $0 + 1 }
        #expect(gaps.count == 1, "\(gaps)")
        if let (before, after) = gaps.first {
            #expect(UInt32(after - before - 1) == stats.skipped, "gap \(before)→\(after), skipped \(stats.skipped)")
        }
        #expect(stats.skipped > 0)
        #expect(sequences.first == 0)
        #expect(UInt32(sequences.count) == stats.streamSent)
        #expect(stats.streamSent + stats.skipped == stats.nextSequence)
        #expect(stats.connects == 2 && stats.disconnects == 1)
    }

    @Test func dropLinkRemovesTheGATTObjectsAndBattery1() async throws {
        let device = BluetoothSimulator.devicePath(Self.strap)
        let characteristic = BluetoothSimulator.heartRateMeasurementPath(Self.strap)
        let (satisfied, messages, objects, reconnect, stats) = try await offPool {
            () -> (Bool, [BusMessage], [String: JSON], CommandResult, BluetoothSimulator.Stats) in
            let sim = try BluetoothSimulator(.init(straps: [Self.knownStrap()]))
            defer { sim.close() }
            let monitor = try BusMonitor(address: sim.address, names: ["org.bluez"])
            defer { monitor.stop() }
            try gdbus(sim, device, "org.bluez.Device1.Connect").check()
            let connected = monitor.wait { added($0, device)?["org.bluez.Battery1"] != nil }
            let before = connected.messages.count
            try sim.dropLink(address: Self.strap)
            let done = monitor.wait { messages in
                let after = Array(messages.dropFirst(before))
                return removed(after, device + "/service000c") != nil && removed(after, device) != nil
            }
            let objects = try managedObjects(sim)
            let reconnect = try gdbus(sim, device, "org.bluez.Device1.Connect")
            return (connected.satisfied && done.satisfied, Array(done.messages.dropFirst(before)), objects, reconnect,
                    try sim.stats(address: Self.strap))
        }
        #expect(satisfied)
        let resolvedAt = messages.firstIndex { property($0, device, "org.bluez.Device1", "ServicesResolved") == .bool(false) }
        let disconnectedAt = messages.firstIndex { property($0, device, "org.bluez.Device1", "Connected") == .bool(false) }
        let characteristicGoneAt = messages.firstIndex { $0.member == "InterfacesRemoved" && $0.arguments.first?.string == characteristic }
        #expect(resolvedAt != nil && disconnectedAt != nil && characteristicGoneAt != nil)
        if let resolvedAt, let disconnectedAt, let characteristicGoneAt {
            #expect(resolvedAt <= disconnectedAt && disconnectedAt < characteristicGoneAt)
        }
        #expect(removed(messages, characteristic)?.contains("org.bluez.GattCharacteristic1") == true)
        #expect(removed(messages, device + "/service000c")?.contains("org.bluez.GattService1") == true)
        #expect(removed(messages, device) == ["org.bluez.Battery1"])
        // The device itself stays, disconnected, with no GATT objects under it.
        #expect(objects[device]?["org.bluez.Device1"]?["Connected"] == variant("b", .bool(false)))
        #expect(objects[device]?["org.bluez.Battery1"] == nil)
        #expect(!objects.keys.contains { $0.hasPrefix(device + "/") })
        // Still in range: a reconnect succeeds.
        #expect(reconnect.succeeded, "\(reconnect)")
        #expect(stats.connects == 2 && stats.disconnects == 1)
    }

    @Test func refusedConnectsFailWithBlueZsError() async throws {
        let device = BluetoothSimulator.devicePath(Self.strap)
        let (refused, accepted, stats) = try await offPool { () -> (CommandResult, CommandResult, BluetoothSimulator.Stats) in
            let sim = try BluetoothSimulator(.init(straps: [Self.knownStrap()]))
            defer { sim.close() }
            try sim.refuseConnects(address: Self.strap, count: 1)
            let refused = try gdbus(sim, device, "org.bluez.Device1.Connect")
            let accepted = try gdbus(sim, device, "org.bluez.Device1.Connect")
            return (refused, accepted, try sim.stats(address: Self.strap))
        }
        #expect(!refused.succeeded)
        #expect(refused.standardError.contains("org.bluez.Error.Failed"), "\(refused)")
        #expect(refused.standardError.contains("le-connection-abort-by-local"), "\(refused)")
        #expect(accepted.succeeded, "\(accepted)")
        #expect(stats.refused == 1 && stats.connects == 1 && stats.connectCalls == 2)
    }

    /// A strap switched off: Connect fails after the connection attempt times out, and a live
    /// link drops.
    @Test func aStrapOutOfRangeCannotBeConnectedAndDropsItsLink() async throws {
        let device = BluetoothSimulator.devicePath(Self.strap)
        let (failed, elapsed, dropped, stats) = try await offPool { () -> (CommandResult, Duration, Bool, BluetoothSimulator.Stats) in
            let sim = try BluetoothSimulator(.init(straps: [Self.knownStrap(inRange: false)], connectTimeout: 0.3))
            defer { sim.close() }
            let start = ContinuousClock.now
            let failed = try gdbus(sim, device, "org.bluez.Device1.Connect")
            let elapsed = ContinuousClock.now - start
            try sim.setInRange(address: Self.strap, true)
            try gdbus(sim, device, "org.bluez.Device1.Connect").check()
            let monitor = try BusMonitor(address: sim.address, names: ["org.bluez"])
            defer { monitor.stop() }
            try sim.setInRange(address: Self.strap, false)
            let dropped = monitor.wait { messages in
                messages.contains { property($0, device, "org.bluez.Device1", "Connected") == .bool(false) }
            }
            return (failed, elapsed, dropped.satisfied, try sim.stats(address: Self.strap))
        }
        #expect(failed.standardError.contains("org.bluez.Error.Failed: le-connection-abort-by-local"), "\(failed)")
        #expect(elapsed >= .milliseconds(300))
        #expect(dropped)
        #expect(stats.connected == false && stats.disconnects == 1 && stats.refused == 1)
    }

    /// Killed and started again, the simulator is a new owner of org.bluez (NameOwnerChanged),
    /// with the same straps back, disconnected, and a running stream carrying on its numbers.
    @Test func restartGivesOrgBluezANewOwnerAndTheStrapsBackDisconnected() async throws {
        let device = BluetoothSimulator.devicePath(Self.strap)
        let result = try await offPool { () -> (String?, String?, Bool, [BusMessage], [String: JSON], UInt32, BluetoothSimulator.Stats) in
            let sim = try BluetoothSimulator(.init(straps: [Self.knownStrap()]))
            defer { sim.close() }
            try gdbus(sim, device, "org.bluez.Device1.Connect").check()
            try sim.startStream(address: Self.strap, rateHz: 10, bpm: [70])
            usleep(300_000)
            let before = sim.busOwner()
            let oldPID = sim.pid
            let monitor = try BusMonitor(address: sim.address)
            defer { monitor.stop() }
            let sequenceBefore = try sim.stats(address: Self.strap).nextSequence
            try sim.restart()
            let newProcess = sim.pid != nil && sim.pid != oldPID
            let after = sim.busOwner()
            let changes = monitor.wait { messages in
                messages.filter { $0.isSignal("org.freedesktop.DBus", "NameOwnerChanged") && $0.arguments.first == .string("org.bluez") }.count >= 2
            }
            return (before, after, newProcess, changes.messages, try managedObjects(sim), sequenceBefore,
                    try sim.stats(address: Self.strap))
        }
        let (before, after, newProcess, messages, objects, sequenceBefore, stats) = result
        #expect(newProcess)
        #expect(before != nil && after != nil && before != after)
        let ownerChanges = messages
            .filter { $0.isSignal("org.freedesktop.DBus", "NameOwnerChanged") && $0.arguments.first == .string("org.bluez") }
            .map { $0.arguments.compactMap(\.string) }
        #expect(ownerChanges == [["org.bluez", before ?? "?", ""], ["org.bluez", "", after ?? "?"]], "\(ownerChanges)")
        let deviceProperties = objects[device]?["org.bluez.Device1"]
        #expect(deviceProperties?["Paired"] == variant("b", .bool(true)))
        #expect(deviceProperties?["Connected"] == variant("b", .bool(false)))
        #expect(!objects.keys.contains { $0.hasPrefix(device + "/") })
        #expect(stats.streaming && stats.nextSequence >= sequenceBefore)
        #expect(stats.connects == 0 && !stats.connected)
    }
}

// MARK: - busctl and gdbus as the client

/// `gdbus call` on org.bluez: its stderr names the D-Bus error ("GDBus.Error:org.bluez.Error.Failed: …").
fileprivate func gdbus(_ sim: BluetoothSimulator, _ path: String, _ method: String, _ arguments: String...) throws(ChildProcessError) -> CommandResult {
    try BlockingCommand.run(
        "gdbus", ["call", "--address", sim.address, "--dest", "org.bluez", "--object-path", path, "--method", method]
            + arguments, timeout: .seconds(20))
}

fileprivate func busctl(
    _ sim: BluetoothSimulator, _ path: String, _ interface: String, _ method: String, _ arguments: String...
) throws(ChildProcessError) -> CommandResult {
    try BlockingCommand.run(
        "busctl", ["--address=" + sim.address, "--json=short", "--", "call", "org.bluez", path, interface, method]
            + arguments, timeout: .seconds(20))
}

/// GetManagedObjects: path → interface → property → {"type", "data"}.
fileprivate func managedObjects(_ sim: BluetoothSimulator) throws(ChildProcessError) -> [String: JSON] {
    let result = try busctl(sim, "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
    try result.check()
    return try JSON(parsing: result.standardOutput)["data"]?[0]?.object ?? [:]
}

/// A property as busctl renders a variant.
fileprivate func variant(_ type: String, _ data: JSON) -> JSON {
    .object(["type": .string(type), "data": data])
}

/// The interfaces of the first InterfacesAdded for `path`.
fileprivate func added(_ messages: [BusMessage], _ path: String) -> [String: JSON]? {
    messages.first { $0.isSignal("org.freedesktop.DBus.ObjectManager", "InterfacesAdded") && $0.arguments.first?.string == path }?
        .arguments[safe: 1]?.object
}

/// The interface names of the first InterfacesRemoved for `path`.
fileprivate func removed(_ messages: [BusMessage], _ path: String) -> [String]? {
    messages.first { $0.isSignal("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved") && $0.arguments.first?.string == path }?
        .arguments[safe: 1]?.array?.compactMap(\.string)
}

/// The value `name` takes in a PropertiesChanged of `interface` at `path` (nil if it does not).
fileprivate func property(_ message: BusMessage?, _ path: String, _ interface: String, _ name: String) -> JSON? {
    guard let message, message.isSignal("org.freedesktop.DBus.Properties", "PropertiesChanged"), message.path == path,
        message.arguments.first?.string == interface
    else { return nil }
    return message.arguments[safe: 1]?[name]?["data"]
}

/// The first value `name` took in a PropertiesChanged.
fileprivate func changed(_ messages: [BusMessage], _ path: String, _ interface: String, _ name: String) -> JSON? {
    messages.lazy.compactMap { property($0, path, interface, name) }.first
}

/// The Value notifications of a characteristic, with the monitor's receive times (µs).
fileprivate func notifications(_ messages: [BusMessage], _ path: String) -> [(value: [Int], time: UInt64)] {
    messages.compactMap { message in
        guard let value = property(message, path, "org.bluez.GattCharacteristic1", "Value")?.array else { return nil }
        return (value.compactMap(\.int), message.receivedMicroseconds)
    }
}

extension Array {
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
