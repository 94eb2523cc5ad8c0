import Synchronization
import Systemd

/// Holds on to the paired heart-rate strap for as long as it runs, following BlueZ's documented
/// API: the adapter from ObjectManager, discovery filtered to the Heart Rate service over LE,
/// Device1.Connect, ServicesResolved, StartNotify on 0x2A37, values from PropertiesChanged, the
/// battery from Battery1 (or 0x2A19). After a link loss, a strap power-off or a bluetoothd restart
/// (NameOwnerChanged) it reconnects with a short capped backoff, with no attempt limit.
///
/// `run()` does the work until its task is cancelled; `events` reports it.
public final class HeartRateStrapClient: Sendable {
    public let configuration: StrapClientConfiguration
    public let events: AsyncStream<StrapEvent>
    private let continuation: AsyncStream<StrapEvent>.Continuation
    private let openBus: @Sendable () throws(BusError) -> BusConnection
    private let onNotification: NotificationTap?

    /// A measurement's bytes with CLOCK_MONOTONIC at receipt, called on the bus thread.
    public typealias NotificationTap = @Sendable (_ strap: StrapAddress, _ value: [UInt8], _ receivedNs: UInt64) -> Void

    /// `openBus` makes a new connection each time the last one was lost; the daemon passes
    /// `BusConnection.system`, which honours DBUS_SYSTEM_BUS_ADDRESS. `onNotification` gets each
    /// measurement straight from the bus thread, in one hand-off, before `events` has it: the SOS
    /// lane's path, which must never wait on the cooperative pool.
    public init(configuration: StrapClientConfiguration, openBus: @escaping @Sendable () throws(BusError) -> BusConnection,
                onNotification: NotificationTap? = nil) {
        self.configuration = configuration
        self.openBus = openBus
        self.onNotification = onNotification
        (events, continuation) = AsyncStream.makeStream(of: StrapEvent.self, bufferingPolicy: .bufferingNewest(4096))
    }

    public func run() async {
        defer { continuation.finish() }
        guard !configuration.straps.isEmpty else { return }
        var backoff = Backoff(minimum: configuration.minimumBackoff, maximum: configuration.maximumBackoff)
        while !Task.isCancelled {
            let bus: BusConnection
            do {
                bus = try openBus()
            } catch {
                continuation.yield(.unavailable(reason: "cannot connect to the system bus: \(error)"))
                try? await Task.sleep(for: backoff.next())
                continue
            }
            var session = StrapSession(bus: bus, configuration: configuration, report: { [continuation] in continuation.yield($0) },
                                       onNotification: onNotification)
            await session.run()
            bus.close()
            if !Task.isCancelled { try? await Task.sleep(for: backoff.next()) }
        }
    }
}

/// One bus connection's worth of work: it ends when the bus goes away or the task is cancelled.
struct StrapSession {
    let bus: BusConnection
    let configuration: StrapClientConfiguration
    let report: @Sendable (StrapEvent) -> Void
    private var backoff: Backoff
    /// Which configured strap to try next (failover goes round the list).
    private var candidate = 0
    private var discovering = false
    private var lastReported: StrapEvent?

    /// The characteristic being streamed and its strap, read by the bus-thread tap.
    private let streaming = Streaming()
    private let onNotification: HeartRateStrapClient.NotificationTap?

    init(bus: BusConnection, configuration: StrapClientConfiguration, report: @escaping @Sendable (StrapEvent) -> Void,
         onNotification: HeartRateStrapClient.NotificationTap? = nil) {
        self.bus = bus
        self.configuration = configuration
        self.report = report
        self.onNotification = onNotification
        backoff = Backoff(minimum: configuration.minimumBackoff, maximum: configuration.maximumBackoff)
    }

    private static let bluezOwnerRule = BusMatchRule(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: BlueZNames.service)

    /// On the bus thread: a measurement of the characteristic being streamed goes straight on.
    private var tap: (@Sendable (BusSignal) -> Void)? {
        guard let onNotification else { return nil }
        let streaming = self.streaming
        return { signal in
            guard signal.member == "PropertiesChanged", let current = streaming.current.withLock({ $0 }), signal.path == current.path,
                  let change = PropertiesChange(signal), change.interface == BlueZNames.gattCharacteristic,
                  let value = change.changed["Value"]?.bytesValue else { return }
            onNotification(current.address, value, signal.receivedNs)
        }
    }

    mutating func run() async {
        let signals: AsyncStream<BusSignal>
        do {
            signals = try await bus.signals(matching: [
                Self.bluezOwnerRule,
                BusMatchRule(sender: BlueZNames.service, interface: BlueZNames.objectManager),
                BusMatchRule(sender: BlueZNames.service, interface: BlueZNames.properties, member: "PropertiesChanged"),
            ], bufferingNewest: 8192, tap: tap)
        } catch {
            report(.unavailable(reason: "cannot watch BlueZ on the bus: \(error)"))
            return
        }
        let inbox = SignalInbox(signals)
        while !Task.isCancelled, bus.isOpen {
            switch await attempt(inbox) {
            case .retry(let delay):
                // Waiting is also listening: bluetoothd coming back or the strap appearing ends it early.
                let watched = Set(configuration.straps.map(\.text))
                if case .closed = await inbox.wait(timeout: delay, { Self.worthRetrying($0, straps: watched) }) { return }
            case .closed:
                return
            }
        }
    }

    private enum Next {
        case retry(after: Duration)
        case closed
    }

    /// A new bluetoothd, a new adapter, or one of our straps showing up (its object appearing, or
    /// its RSSI while discovering): worth trying again now rather than after the backoff.
    private static func worthRetrying(_ signal: BusSignal, straps: Set<String>) -> Bool? {
        func isOurs(_ path: String) -> Bool {
            guard let component = path.split(separator: "/").first(where: { $0.hasPrefix("dev_") }) else { return false }
            return straps.contains(String(component.dropFirst(4)).replacingUnderscores())
        }
        switch signal.member {
        case "NameOwnerChanged":
            return signal.arguments.count == 3 && signal.arguments[2].stringValue?.isEmpty == false ? true : nil
        case "InterfacesAdded":
            guard let path = signal.arguments.first?.stringValue, let interfaces = signal.arguments.dropFirst().first?.dictionaryValue else { return nil }
            return interfaces[BlueZNames.adapter] != nil || (interfaces[BlueZNames.device] != nil && isOurs(path)) ? true : nil
        case "PropertiesChanged":
            guard let change = PropertiesChange(signal), change.interface == BlueZNames.device, isOurs(change.path) else { return nil }
            return change.changed["RSSI"] != nil || change.changed["Connected"]?.boolValue == true ? true : nil
        default:
            return nil
        }
    }

    private mutating func say(_ event: StrapEvent) {
        // Repeated failures of the same kind would flood the journal at one a second.
        if event == lastReported { return }
        lastReported = event
        report(event)
    }

    /// One try at getting the strap streaming; returns when it stopped streaming or could not start.
    private mutating func attempt(_ inbox: SignalInbox) async -> Next {
        let objects: BlueZObjects
        do {
            objects = BlueZObjects(objects: try await bus.managedObjects(service: BlueZNames.service, timeout: .seconds(5)))
        } catch {
            if error.isClosed { return .closed }
            discovering = false
            say(.unavailable(reason: error.isServiceUnknown ? "bluetoothd is not running" : "BlueZ did not answer: \(error)"))
            return .retry(after: backoff.next())
        }
        guard let adapterPath = objects.adapterPath(named: configuration.adapter) else {
            say(.unavailable(reason: configuration.adapter.map { "no Bluetooth adapter \($0)" } ?? "no Bluetooth adapter"))
            return .retry(after: backoff.next())
        }
        if objects.adapterProperties(adapterPath)?["Powered"]?.boolValue == false {
            try? await bus.setProperty(service: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, name: "Powered", value: .bool(true))
        }

        // The configured straps whose device objects BlueZ knows, starting from the candidate.
        let order = (0..<configuration.straps.count).map { (candidate + $0) % configuration.straps.count }
        guard let index = order.first(where: { objects.device(configuration.straps[$0].devicePath(under: adapterPath)) != nil }) else {
            await startDiscovery(adapterPath)
            say(.searching(configuration.straps[candidate]))
            return .retry(after: backoff.next())
        }
        let address = configuration.straps[index]
        let devicePath = address.devicePath(under: adapterPath)
        // Next time, try the other strap first if this one fails.
        candidate = (index + 1) % configuration.straps.count

        let device = objects.device(devicePath) ?? [:]
        if device["Connected"]?.boolValue != true || device["ServicesResolved"]?.boolValue != true {
            do {
                _ = try await bus.call(BusMethodCall(destination: BlueZNames.service, path: devicePath, interface: BlueZNames.device, member: "Connect"), timeout: configuration.connectTimeout)
            } catch {
                if error.isClosed { return .closed }
                // AlreadyConnected is fine; everything else is a failed attempt.
                if error.name != "org.bluez.Error.AlreadyConnected" {
                    say(.connectFailed(address, reason: error.description))
                    if error.isUnknownObject { await startDiscovery(adapterPath) }
                    return .retry(after: backoff.next())
                }
            }
            switch await waitForServicesResolved(inbox, devicePath: devicePath) {
            case .done(true): break
            case .done(false), .timedOut:
                say(.connectFailed(address, reason: "services not resolved within \(configuration.resolveTimeout)"))
                return .retry(after: backoff.next())
            case .closed: return .closed
            }
        }
        await stopDiscovery(adapterPath)
        return await stream(inbox, address: address, devicePath: devicePath, name: device["Alias"]?.stringValue ?? device["Name"]?.stringValue ?? address.text)
    }

    private func waitForServicesResolved(_ inbox: SignalInbox, devicePath: String) async -> SignalInbox.Outcome<Bool> {
        // It may have turned true before the signal match saw it: ask once, then listen.
        if let value = try? await bus.property(service: BlueZNames.service, path: devicePath, interface: BlueZNames.device, name: "ServicesResolved"),
           value.boolValue == true { return .done(true) }
        return await inbox.wait(timeout: configuration.resolveTimeout) { signal in
            guard signal.path == devicePath, let change = PropertiesChange(signal), change.interface == BlueZNames.device else { return nil }
            if change.changed["ServicesResolved"]?.boolValue == true { return true }
            if change.changed["Connected"]?.boolValue == false { return false }
            return nil
        }
    }

    /// Connected and resolved: subscribe to the measurement and pass values on until the link goes.
    private mutating func stream(_ inbox: SignalInbox, address: StrapAddress, devicePath: String, name: String) async -> Next {
        let objects: BlueZObjects
        do {
            objects = BlueZObjects(objects: try await bus.managedObjects(service: BlueZNames.service, timeout: .seconds(5)))
        } catch {
            return error.isClosed ? .closed : .retry(after: backoff.next())
        }
        guard let characteristic = objects.heartRateCharacteristic(device: devicePath) else {
            say(.connectFailed(address, reason: "no Heart Rate Measurement (0x2A37) in a Heart Rate service (0x180D): not a heart-rate strap"))
            _ = try? await bus.call(BusMethodCall(destination: BlueZNames.service, path: devicePath, interface: BlueZNames.device, member: "Disconnect"), timeout: .seconds(5))
            return .retry(after: backoff.next())
        }
        // From here the bus thread hands measurements on by itself, until the link goes.
        streaming.current.withLock { $0 = (characteristic, address) }
        defer { streaming.current.withLock { $0 = nil } }
        do {
            _ = try await bus.call(BusMethodCall(destination: BlueZNames.service, path: characteristic, interface: BlueZNames.gattCharacteristic, member: "StartNotify"), timeout: .seconds(10))
        } catch {
            if error.isClosed { return .closed }
            // InProgress: a notify session is already being set up (ours, from before): keep going.
            if error.name != "org.bluez.Error.InProgress" {
                say(.connectFailed(address, reason: "StartNotify failed: \(error)"))
                return .retry(after: backoff.next())
            }
        }
        backoff.reset()
        lastReported = nil
        report(.connected(address, name: name))
        await readBattery(objects, address: address, devicePath: devicePath)

        let ownerRuleMember = "NameOwnerChanged"
        var reason = "the bus connection closed"
        let outcome = await inbox.wait(timeout: .seconds(Int64.max / 2_000_000_000)) { signal -> String? in
            if signal.member == ownerRuleMember {
                return signal.arguments.count == 3 && signal.arguments[2].stringValue?.isEmpty != false ? "bluetoothd stopped" : nil
            }
            if signal.member == "InterfacesRemoved", let path = signal.arguments.first?.stringValue,
               path == devicePath || path == characteristic {
                return "BlueZ removed the device"
            }
            guard let change = PropertiesChange(signal) else { return nil }
            if change.path == characteristic, change.interface == BlueZNames.gattCharacteristic, let value = change.changed["Value"]?.bytesValue {
                report(.notification(address, value: value, receivedNs: signal.receivedNs))
            } else if change.path == devicePath, change.interface == BlueZNames.device, change.changed["Connected"]?.boolValue == false {
                return "link lost"
            } else if change.path == devicePath, change.interface == BlueZNames.battery, let percent = change.changed["Percentage"]?.integerValue {
                report(.battery(address, percent: percent))
            }
            return nil
        }
        switch outcome {
        case .done(let why): reason = why
        case .timedOut: reason = "no end"
        case .closed: break
        }
        report(.disconnected(address, reason: reason))
        if case .closed = outcome { return .closed }
        // Straight back to it: the strap may return at any moment.
        return .retry(after: backoff.next())
    }

    private func readBattery(_ objects: BlueZObjects, address: StrapAddress, devicePath: String) async {
        if let percent = objects.objects[devicePath]?[BlueZNames.battery]?["Percentage"]?.integerValue {
            report(.battery(address, percent: percent))
            return
        }
        guard let characteristic = objects.batteryCharacteristic(device: devicePath),
              let reply = try? await bus.call(BusMethodCall(destination: BlueZNames.service, path: characteristic, interface: BlueZNames.gattCharacteristic, member: "ReadValue", arguments: [.dictionary([:])]), timeout: .seconds(5)),
              let bytes = reply.first?.bytesValue, bytes.count == 1, bytes[0] <= 100 else { return }
        report(.battery(address, percent: Int(bytes[0])))
    }

    private mutating func startDiscovery(_ adapterPath: String) async {
        guard !discovering else { return }
        let filter = BusValue.dictionary(["UUIDs": .strings([BlueZNames.heartRateService]), "Transport": .string("le")])
        do {
            _ = try await bus.call(BusMethodCall(destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "SetDiscoveryFilter", arguments: [filter]), timeout: .seconds(5))
            _ = try await bus.call(BusMethodCall(destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "StartDiscovery"), timeout: .seconds(5))
            discovering = true
        } catch where error.name == "org.bluez.Error.InProgress" {
            discovering = true
        } catch {
            say(.unavailable(reason: "cannot start discovery: \(error)"))
        }
    }

    private mutating func stopDiscovery(_ adapterPath: String) async {
        guard discovering else { return }
        discovering = false
        _ = try? await bus.call(BusMethodCall(destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "StopDiscovery"), timeout: .seconds(5))
    }
}

/// Shared between the session and its bus-thread tap.
private final class Streaming: Sendable {
    let current = Mutex<(path: String, address: StrapAddress)?>(nil)
}

extension String {
    fileprivate func replacingUnderscores() -> String { String(map { $0 == "_" ? ":" : $0 }) }
}
