import Synchronization
import Systemd

/// Places voice calls through ModemManager's D-Bus API, the way mmcli does: a modem with the
/// Voice interface, Voice.CreateCall({number}) for a Call object, a match on its StateChanged
/// signal, then Call.Start. The call keeps a bus connection of its own for as long as it lasts:
/// every state change is handed to `onState` straight from the bus thread, and once the call is
/// terminated its object is deleted and the connection closed.
///
/// A call is never retried here: placing one is an act with consequences (an emergency operator
/// answers), so whoever asks decides, once.
public struct VoiceCaller: Sendable {
    private let openBus: @Sendable () throws(BusError) -> BusConnection

    /// Each call opens its own connection (the daemon passes `BusConnection.system`).
    public init(openBus: @escaping @Sendable () throws(BusError) -> BusConnection) {
        self.openBus = openBus
    }

    /// Creates and starts a call to `number`; returns once Start has answered. `timeout` bounds
    /// the placing (not the call). `onState` sees each new state, `terminated` last; it runs on
    /// the bus thread and must not block.
    public func place(to number: String, timeout: Duration,
                      onState: @escaping @Sendable (CallState) -> Void) async throws(CallError) -> PlacedCall {
        let deadline = Deadline(limit: timeout)
        let bus: BusConnection
        do {
            bus = try openBus()
        } catch {
            throw .busUnavailable(error.description)
        }
        do throws(CallError) {
            let limit: Duration
            do { limit = try deadline.remaining() } catch { throw CallError(error) { .queryFailed(name: $0, message: $1) } }
            let objects: BusConnection.ManagedObjects
            do {
                objects = try await bus.managedObjects(service: ModemManagerNames.service, path: ModemManagerNames.managerPath, timeout: limit)
            } catch {
                throw CallError(deadline.mapped(error) { .queryFailed(name: $0.name, message: $0.message) }) { .queryFailed(name: $0, message: $1) }
            }
            guard let modem = ModemManagerObjects(objects: objects).voiceModem() else { throw .noVoiceModem }

            let created = try await call(bus, deadline, BusMethodCall(
                destination: ModemManagerNames.service, path: modem.path, interface: ModemManagerNames.voice,
                member: "CreateCall", arguments: [.dictionary(["number": .string(number)])])
            ) { .createFailed(name: $0, message: $1) }
            guard let path = created.first?.stringValue else {
                throw .createFailed(name: "pacer.Bus.UnexpectedReply", message: "Voice.CreateCall returned \(created)")
            }
            let placed = PlacedCall(bus: bus, path: path, modem: modem.path, number: number)
            let changes: AsyncStream<BusSignal>
            do {
                // Before Start, so that no change can come before the match is in place.
                changes = try await bus.signals(
                    matching: [BusMatchRule(path: path, interface: ModemManagerNames.call, member: "StateChanged")], bufferingNewest: 1,
                    tap: { signal in
                        guard signal.arguments.count >= 2, let new = signal.arguments[1].integerValue else { return }
                        let state = CallState(modemManagerValue: Int32(clamping: new))
                        onState(state)
                        if state == .terminated { placed.ended() }
                    })
            } catch {
                throw CallError(deadline.mapped(error) { .queryFailed(name: $0.name, message: $0.message) }) { .queryFailed(name: $0, message: $1) }
            }
            placed.keep(changes)
            do throws(CallError) {
                _ = try await call(bus, deadline, BusMethodCall(
                    destination: ModemManagerNames.service, path: path, interface: ModemManagerNames.call, member: "Start")
                ) { .startFailed(name: $0, message: $1) }
            } catch {
                await placed.delete()
                throw error
            }
            return placed
        } catch {
            bus.close()
            throw error
        }
    }

    private func call(_ bus: BusConnection, _ deadline: Deadline, _ call: BusMethodCall,
                      failure: (String, String) -> CallError) async throws(CallError) -> [BusValue] {
        let limit: Duration
        do { limit = try deadline.remaining() } catch { throw CallError(error, failure: failure) }
        do {
            return try await bus.call(call, timeout: limit)
        } catch {
            throw CallError(deadline.mapped(error) { .queryFailed(name: $0.name, message: $0.message) }, failure: failure)
        }
    }
}

/// A call that was started: hang it up, or wait for it to end. Its bus connection lives until
/// the call is terminated (or `hangUp` has answered), then the Call object is deleted.
public final class PlacedCall: Sendable {
    public let path: String
    /// The modem it goes through.
    public let modem: String
    public let number: String
    private let bus: BusConnection
    private let changes = Mutex<AsyncStream<BusSignal>?>(nil)

    init(bus: BusConnection, path: String, modem: String, number: String) {
        self.bus = bus
        self.path = path
        self.modem = modem
        self.number = number
    }

    /// Holds the signal stream: its match lives as long as it does.
    func keep(_ stream: AsyncStream<BusSignal>) {
        changes.withLock { $0 = stream }
    }

    /// Terminated: the object goes, then the connection. From the bus thread, so in a task.
    func ended() {
        Task { await self.delete() }
    }

    /// Call.Hangup. A call already terminated answers with an error, which is not one here.
    public func hangUp(timeout: Duration) async throws(CallError) {
        guard bus.isOpen else { return }
        do {
            _ = try await bus.call(BusMethodCall(destination: ModemManagerNames.service, path: path,
                                                 interface: ModemManagerNames.call, member: "Hangup"), timeout: timeout)
        } catch {
            if error.isClosed { return }
            if error.isTimeout { throw .timedOut(timeout) }
            if error.isServiceUnknown { throw .modemManagerNotRunning }
            throw .hangupFailed(name: error.name, message: error.message)
        }
    }

    /// Best effort: a Call object left behind costs ModemManager a little memory, no more.
    func delete() async {
        _ = try? await bus.call(BusMethodCall(destination: ModemManagerNames.service, path: modem, interface: ModemManagerNames.voice,
                                              member: "DeleteCall", arguments: [.objectPath(path)]), timeout: .seconds(1))
        changes.withLock { $0 = nil }
        bus.close()
    }
}
