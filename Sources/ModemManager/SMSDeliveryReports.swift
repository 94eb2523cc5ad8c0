import Synchronization
import Systemd

/// Watches for the status reports of messages that were sent asking for one
/// (`SMSSender.send(…, deliveryReport: true)`).
///
/// ModemManager (1.20) leaves the sent message alone when its report comes: it exports the report
/// as a message of its own (PduType STATUS_REPORT, State RECEIVED) with the sent message's
/// MessageReference and recipient, and announces it with Messaging.Added(path, received: true).
/// So every modem's Added is watched (a modem plugged in again under a new path, or a restarted
/// ModemManager, is still heard), a report is matched to its watch by reference and number,
/// handed over, then deleted from the modem.
///
/// One bus connection serves every watch: opened by `listen`, closed once no watch is left. A
/// watch ends with a final report or when its time is up. Handlers run on the cooperative pool
/// and must not block; nothing ever waits for a report.
public final class SMSDeliveryReports: Sendable {
    public typealias Handler = @Sendable (SMSStatusReport) -> Void

    private struct Watch {
        var reference: UInt32
        var number: String
        /// The modem the text went through, whose stored messages are read again after a reconnect.
        var modem: String
        var until: ContinuousClock.Instant
        var handler: Handler
    }

    private struct Unmatched {
        var report: SMSStatusReport
        var modem: String
        var at: ContinuousClock.Instant
    }

    private struct State {
        var watches: [Watch] = []
        var bus: BusConnection?
        /// Holds the match on Added: it lives as long as the stream.
        var added: AsyncStream<BusSignal>?
        var lastListen = ContinuousClock.now
        /// Reports that came before their watch (a send whose answer was slower than the
        /// network's report), kept for `unmatchedKept`.
        var unmatched: [Unmatched] = []
        var expiring = false
    }

    private let state = Mutex(State())
    private let openBus: @Sendable () throws(BusError) -> BusConnection
    /// A listen with no watch after it (the send failed) keeps the connection this long.
    private let idleKept: Duration
    static let unmatchedKept: Duration = .seconds(120)
    static let callTimeout: Duration = .seconds(5)

    /// The daemon passes `BusConnection.system`. `idleKept`: how long the connection outlives the
    /// last listen with nothing watched; longer than a send may take (`[sos] attempt_timeout_s`
    /// is at most 300 s), else a watch starts without a connection and has to reconnect.
    public init(openBus: @escaping @Sendable () throws(BusError) -> BusConnection, idleKept: Duration = .seconds(360)) {
        self.openBus = openBus
        self.idleKept = idleKept
    }

    /// Watches in progress (none is left behind once their time is up).
    public var watchCount: Int { state.withLock { $0.watches.count } }

    /// Whether the bus connection is open (it closes once nothing is watched).
    public var isListening: Bool { state.withLock { $0.bus?.isOpen == true } }

    /// Listens for reports from now on; before a send, so that no report can come unheard.
    public func listen() async throws(SMSError) {
        state.withLock { $0.lastListen = .now }
        defer { keepExpiring() }
        if state.withLock({ $0.bus?.isOpen == true }) { return }
        let bus: BusConnection
        do {
            bus = try openBus()
        } catch {
            throw .busUnavailable(error.description)
        }
        let added: AsyncStream<BusSignal>
        do {
            // Not by sender: sd-bus cannot check a well-known name locally. A path that is not
            // ModemManager's message fails GetAll and is ignored.
            added = try await bus.signals(
                matching: [BusMatchRule(interface: ModemManagerNames.messaging, member: "Added")], bufferingNewest: 1,
                tap: { [weak self] signal in
                    guard signal.arguments.count >= 2, signal.arguments[1].boolValue == true,
                          let path = signal.arguments[0].stringValue else { return }
                    Task { await self?.inspect(path, modem: signal.path) }
                })
        } catch {
            bus.close()
            throw error.isClosed ? .busClosed : .queryFailed(name: error.name, message: error.message)
        }
        let kept = state.withLock { state in
            // Another listen got there first.
            if state.bus?.isOpen == true { return false }
            state.bus = bus
            state.added = added
            return true
        }
        if !kept { bus.close() }
    }

    /// Watches for the report of the message `receipt` stands for, for at most `duration`.
    /// `onReport` sees each report (a temporary error may come before the final word).
    public func watch(_ receipt: SMSReceipt, for duration: Duration, onReport: @escaping Handler) {
        let now = ContinuousClock.now
        let early = state.withLock { state in
            state.unmatched.removeAll { now - $0.at > Self.unmatchedKept }
            let early = state.unmatched.filter { $0.report.isAbout(reference: receipt.reference, number: receipt.number) }
            state.unmatched.removeAll { $0.report.isAbout(reference: receipt.reference, number: receipt.number) }
            if !early.contains(where: \.report.state.isFinal) {
                state.watches.append(Watch(reference: receipt.reference, number: receipt.number, modem: receipt.modem, until: now + duration,
                                           handler: onReport))
            }
            return early
        }
        for entry in early {
            onReport(entry.report)
            Task { await self.delete(entry.report.path, from: entry.modem) }
        }
        keepExpiring()
    }

    // MARK: Reports

    private func inspect(_ path: String, modem: String) async {
        guard let bus = state.withLock({ $0.bus }), bus.isOpen else { return }
        let properties: [String: BusValue]
        do {
            let reply = try await bus.call(BusMethodCall(destination: ModemManagerNames.service, path: path, interface: ModemManagerNames.properties,
                                                         member: "GetAll", arguments: [.string(ModemManagerNames.sms)]), timeout: Self.callTimeout)
            properties = reply.first?.dictionaryValue ?? [:]
        } catch {
            // Gone already, or not ModemManager's: nothing to report.
            return
        }
        // A message someone sent us is not ours to touch.
        guard properties["PduType"]?.integerValue == ModemManagerNames.smsPduTypeStatusReport else { return }
        let report = SMSStatusReport(state: SMSDeliveryState(rawValue: UInt32(clamping: properties["DeliveryState"]?.integerValue ?? 0x100)),
                                     number: properties["Number"]?.stringValue ?? "",
                                     reference: UInt32(clamping: properties["MessageReference"]?.integerValue ?? 0),
                                     dischargeTimestamp: properties["DischargeTimestamp"]?.stringValue ?? "", path: path)
        let now = ContinuousClock.now
        let handler = state.withLock { state -> Handler? in
            state.watches.removeAll { $0.until <= now }
            // The newest watch first: references cycle through 255 values.
            guard let index = state.watches.lastIndex(where: { report.isAbout(reference: $0.reference, number: $0.number) }) else {
                state.unmatched.append(Unmatched(report: report, modem: modem, at: now))
                return nil
            }
            let handler = state.watches[index].handler
            if report.state.isFinal { state.watches.remove(at: index) }
            return handler
        }
        guard let handler else { return }
        handler(report)
        await delete(path, from: modem)
    }

    /// Inspects every message stored on the watched texts' modems (`Messaging.List`).
    private func catchUp() async {
        guard let bus = state.withLock({ $0.bus }), bus.isOpen else { return }
        for modem in Set(state.withLock { $0.watches.map(\.modem) }) {
            guard let reply = try? await bus.call(BusMethodCall(destination: ModemManagerNames.service, path: modem,
                                                                interface: ModemManagerNames.messaging, member: "List", arguments: []),
                                                  timeout: Self.callTimeout),
                  case .array(_, let paths)? = reply.first else { continue }
            for path in paths.compactMap(\.stringValue) { await inspect(path, modem: modem) }
        }
    }

    /// Best effort, briefly: a report left behind costs the modem's storage a slot, no more.
    private func delete(_ message: String, from modem: String) async {
        guard let bus = state.withLock({ $0.bus }), bus.isOpen else { return }
        _ = try? await bus.call(BusMethodCall(destination: ModemManagerNames.service, path: modem, interface: ModemManagerNames.messaging,
                                              member: "Delete", arguments: [.objectPath(message)]), timeout: .seconds(1))
    }

    // MARK: Time

    /// One task at a time ends the watches whose time is up, reconnects a bus that went away
    /// while something is watched, and closes the connection once nothing is.
    private func keepExpiring() {
        let start = state.withLock { state in
            if state.expiring { return false }
            state.expiring = true
            return true
        }
        guard start else { return }
        Task { await self.expire() }
    }

    private func expire() async {
        while true {
            let now = ContinuousClock.now
            let (next, reconnect) = state.withLock { state -> (ContinuousClock.Instant?, Bool) in
                state.watches.removeAll { $0.until <= now }
                state.unmatched.removeAll { now - $0.at > Self.unmatchedKept }
                let idleUntil = state.lastListen + idleKept
                guard let earliest = state.watches.map(\.until).min() else {
                    if idleUntil > now { return (idleUntil, false) }
                    state.bus?.close()
                    state.bus = nil
                    state.added = nil
                    state.unmatched = []
                    state.expiring = false
                    return (nil, false)
                }
                return (earliest, state.bus?.isOpen != true)
            }
            guard let next else { return }
            // The connection went (idle, or the system bus restarted): listen again, then read the
            // modems' stored messages, for a report that came while nobody listened.
            if reconnect, (try? await listen()) != nil { await catchUp() }
            try? await Task.sleep(until: min(next, now + .seconds(30)), clock: .continuous)
        }
    }
}
