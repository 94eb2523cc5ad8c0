import Systemd

/// Sends text messages through ModemManager's D-Bus API, the way mmcli does: a modem with the
/// Messaging interface from ModemManager's ObjectManager, Messaging.Create({number, text}),
/// Sms.Send (which returns once the modem has the network's answer, seconds later), then the
/// message's State, which must be SENT. The SMS object is deleted again once the outcome is known,
/// so repeated alerts leave nothing behind in ModemManager.
///
/// Nothing is kept between calls: each one looks for the modem again, so a modem that was
/// unplugged and came back under a new path, or a restarted ModemManager, is simply used.
public struct SMSSender: Sendable {
    private let source: BusSource

    private enum BusSource: Sendable {
        case shared(BusConnection)
        case perCall(@Sendable () throws(BusError) -> BusConnection)
    }

    /// Every call uses `bus`; once it has closed, calls fail with `busClosed`.
    public init(bus: BusConnection) {
        source = .shared(bus)
    }

    /// Each call opens its own connection and closes it afterwards (alerts are rare, and a
    /// connection lost since the last one must not stop the next). The daemon passes
    /// `BusConnection.system`, which honours DBUS_SYSTEM_BUS_ADDRESS.
    public init(openBus: @escaping @Sendable () throws(BusError) -> BusConnection) {
        source = .perCall(openBus)
    }

    /// Sends `text` to `number` and returns once ModemManager reports it SENT. `timeout` bounds
    /// the whole operation, most of which is Sms.Send waiting for the network. `deliveryReport`
    /// asks the network for a status report (`SMSDeliveryReports` hears it).
    public func send(text: String, to number: String, timeout: Duration, deliveryReport: Bool = false) async throws(SMSError) -> SMSReceipt {
        let deadline = Deadline(limit: timeout)
        return try await withBus { bus throws(SMSError) in
            let objects = try await managedObjects(bus, deadline)
            guard let modem = ModemManagerObjects(objects: objects).messagingModem() else { throw .noModem }
            var fields: [String: BusValue] = ["number": .string(number), "text": .string(text)]
            if deliveryReport { fields["delivery-report-request"] = .bool(true) }

            let created = try await call(bus, deadline, BusMethodCall(
                destination: ModemManagerNames.service, path: modem.path, interface: ModemManagerNames.messaging,
                member: "Create", arguments: [.dictionary(fields)])
            ) { .createFailed(name: $0.name, message: $0.message) }
            guard let message = created.first?.stringValue else {
                throw .createFailed(name: "pacer.Bus.UnexpectedReply", message: "Messaging.Create returned \(created)")
            }

            do throws(SMSError) {
                _ = try await call(bus, deadline, BusMethodCall(
                    destination: ModemManagerNames.service, path: message, interface: ModemManagerNames.sms, member: "Send")
                ) { .sendFailed(name: $0.name, message: $0.message) }
            } catch {
                // A Send that timed out may still be under way in the modem: leave it be.
                if case .sendFailed = error { await delete(message, from: modem.path, bus) }
                throw error
            }

            let reply = try await call(bus, deadline, BusMethodCall(
                destination: ModemManagerNames.service, path: message, interface: ModemManagerNames.properties,
                member: "GetAll", arguments: [.string(ModemManagerNames.sms)])
            ) { .queryFailed(name: $0.name, message: $0.message) }
            let properties = reply.first?.dictionaryValue ?? [:]
            let state = UInt32(clamping: properties["State"]?.integerValue ?? 0)
            await delete(message, from: modem.path, bus)
            guard state == ModemManagerNames.smsStateSent else { throw .notSent(state: state) }
            return SMSReceipt(modem: modem.path, message: message, number: number,
                              reference: UInt32(clamping: properties["MessageReference"]?.integerValue ?? 0),
                              elapsed: deadline.elapsed)
        }
    }

    /// Every modem ModemManager has, by path (an empty list when it has none).
    public func modems(timeout: Duration = .seconds(5)) async throws(SMSError) -> [ModemInfo] {
        let deadline = Deadline(limit: timeout)
        return try await withBus { bus throws(SMSError) in
            ModemManagerObjects(objects: try await managedObjects(bus, deadline)).modems
        }
    }

    // MARK: Steps

    private func managedObjects(_ bus: BusConnection, _ deadline: Deadline) async throws(SMSError) -> BusConnection.ManagedObjects {
        let limit = try deadline.remaining()
        do {
            return try await bus.managedObjects(service: ModemManagerNames.service, path: ModemManagerNames.managerPath, timeout: limit)
        } catch {
            throw deadline.mapped(error) { .queryFailed(name: $0.name, message: $0.message) }
        }
    }

    /// One call with what is left of the time; bus-level failures mapped alike for every step,
    /// the rest by `failure`.
    private func call(_ bus: BusConnection, _ deadline: Deadline, _ call: BusMethodCall,
                      failure: (BusError) -> SMSError) async throws(SMSError) -> [BusValue] {
        let limit = try deadline.remaining()
        do {
            return try await bus.call(call, timeout: limit)
        } catch {
            throw deadline.mapped(error, failure)
        }
    }

    /// Best effort, briefly: a message left behind costs ModemManager a little memory, no more.
    private func delete(_ message: String, from modem: String, _ bus: BusConnection) async {
        _ = try? await bus.call(
            BusMethodCall(destination: ModemManagerNames.service, path: modem, interface: ModemManagerNames.messaging,
                          member: "Delete", arguments: [.objectPath(message)]),
            timeout: .seconds(1))
    }

    private func withBus<T: Sendable>(_ body: (BusConnection) async throws(SMSError) -> T) async throws(SMSError) -> T {
        switch source {
        case .shared(let bus):
            guard bus.isOpen else { throw .busClosed }
            return try await body(bus)
        case .perCall(let open):
            let bus: BusConnection
            do {
                bus = try open()
            } catch {
                throw .busUnavailable(error.description)
            }
            defer { bus.close() }
            return try await body(bus)
        }
    }
}
