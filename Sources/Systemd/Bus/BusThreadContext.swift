internal import CSystemd
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// Everything that touches sd-bus, used on the bus thread only. C callbacks find their call or
/// subscription through `userdata`, which points at an object this context keeps alive until
/// the callback has run or the bus is gone.
final class BusThreadContext {
    private let bus: OpaquePointer
    private let event: OpaquePointer
    private var wakeSource: OpaquePointer?
    private var disconnectFilter: OpaquePointer?
    unowned(unsafe) var loop: BusLoop!
    private var stopping = false
    /// The bus is gone: calls and matches still queued are failed, not started.
    private var ended = false

    final class PendingCall {
        unowned let context: BusThreadContext
        let continuation: CheckedContinuation<Result<[BusValue], BusError>, Never>
        var finished = false
        init(context: BusThreadContext, continuation: CheckedContinuation<Result<[BusValue], BusError>, Never>) {
            self.context = context
            self.continuation = continuation
        }
        func finish(_ result: Result<[BusValue], BusError>) {
            guard !finished else { return }
            finished = true
            continuation.resume(returning: result)
        }
    }

    final class Subscription {
        let continuation: AsyncStream<BusSignal>.Continuation
        /// Sees each signal on the bus thread before the stream does (see `BusConnection.signals`).
        let tap: (@Sendable (BusSignal) -> Void)?
        var slots: [OpaquePointer] = []
        init(continuation: AsyncStream<BusSignal>.Continuation, tap: (@Sendable (BusSignal) -> Void)?) {
            self.continuation = continuation
            self.tap = tap
        }
    }

    private var pending: [ObjectIdentifier: PendingCall] = [:]
    private var subscriptions: [ObjectIdentifier: Subscription] = [:]

    init(bus: OpaquePointer, wakeDescriptor: Int32) throws(BusError) {
        var event: OpaquePointer? = nil
        var result = sd_event_new(&event)
        guard result >= 0, let event else {
            sd_bus_unref(bus)
            throw .local("sd_event_new", returned: result)
        }
        self.bus = bus
        self.event = event
        result = sd_bus_attach_event(bus, event, 0)
        if result >= 0 {
            let me = Unmanaged.passUnretained(self).toOpaque()
            result = sd_event_add_io(event, &wakeSource, wakeDescriptor, UInt32(EPOLLIN.rawValue), wakeHandler, me)
            if result >= 0 { result = sd_bus_add_filter(bus, &disconnectFilter, disconnectHandler, me) }
        }
        guard result >= 0 else {
            tearDown()
            throw .local("attach the bus to its event loop", returned: result)
        }
    }

    func run() {
        while !stopping {
            let result = sd_event_run(event, UInt64.max)
            if result < 0 && result != -EINTR { break }
            if loop.shouldStop { stopping = true }
        }
        endEverything(BusError.closed("the bus connection was closed"))
        // Jobs handed in after the last wake-up (the bus went away between their submit and
        // their turn) would otherwise never run and their callers wait for ever. Closing the
        // queue first means none can follow these.
        ended = true
        loop.close()
        for job in loop.takeJobs() { job(self) }
        tearDown()
    }

    func tearDown() {
        for subscription in subscriptions.values {
            for slot in subscription.slots { sd_bus_slot_unref(slot) }
            subscription.continuation.finish()
        }
        subscriptions.removeAll()
        if let disconnectFilter { sd_bus_slot_unref(disconnectFilter) }
        disconnectFilter = nil
        if let wakeSource { sd_event_source_unref(wakeSource) }
        wakeSource = nil
        // Nothing else holds the bus now, so closing (not flushing: the peer may be gone) is safe.
        sd_bus_detach_event(bus)
        sd_bus_close(bus)
        sd_bus_unref(bus)
        sd_event_unref(event)
    }

    fileprivate func runJobs() {
        for job in loop.takeJobs() { job(self) }
        if loop.shouldStop { stopping = true }
    }

    /// The bus went away (sd-bus's Disconnected; internal for the tests).
    func disconnected() {
        endEverything(BusError.closed("the bus went away"))
        loop.close()
        stopping = true
    }

    private func endEverything(_ error: BusError) {
        for call in pending.values { call.finish(.failure(error)) }
        pending.removeAll()
        for subscription in subscriptions.values { subscription.continuation.finish() }
    }

    // MARK: Calls

    func startCall(_ call: BusMethodCall, timeoutMicroseconds: UInt64, continuation: CheckedContinuation<Result<[BusValue], BusError>, Never>) {
        guard !ended else {
            continuation.resume(returning: .failure(.closed("the bus went away before \(call.interface).\(call.member) was sent")))
            return
        }
        var message: OpaquePointer? = nil
        var result = sd_bus_message_new_method_call(bus, &message, call.destination, call.path, call.interface, call.member)
        guard result >= 0, let message else {
            continuation.resume(returning: .failure(.sending("\(call.interface).\(call.member)", returned: result)))
            return
        }
        defer { sd_bus_message_unref(message) }
        do {
            try BusMessageCoding.append(call.arguments, to: message)
        } catch {
            continuation.resume(returning: .failure(error.busError))
            return
        }
        let entry = PendingCall(context: self, continuation: continuation)
        // A floating slot: sd-bus calls back exactly once (reply, error or timeout) while the bus lives.
        result = sd_bus_call_async(bus, nil, message, replyHandler, Unmanaged.passUnretained(entry).toOpaque(), timeoutMicroseconds)
        guard result >= 0 else {
            continuation.resume(returning: .failure(.sending("\(call.interface).\(call.member)", returned: result)))
            return
        }
        pending[ObjectIdentifier(entry)] = entry
    }

    fileprivate func complete(_ entry: PendingCall, reply: OpaquePointer) {
        pending[ObjectIdentifier(entry)] = nil
        if let error = sd_bus_message_get_error(reply), sd_bus_error_is_set(error) != 0 {
            let name = error.pointee.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
            let text = error.pointee.message.map { String(cString: $0) } ?? ""
            entry.finish(.failure(BusError(name: name, message: text)))
            return
        }
        do {
            entry.finish(.success(try BusMessageCoding.readAll(reply)))
        } catch {
            entry.finish(.failure(error.busError))
        }
    }

    // MARK: Signals

    func addMatches(_ rules: [BusMatchRule], continuation: AsyncStream<BusSignal>.Continuation,
                    tap: (@Sendable (BusSignal) -> Void)? = nil) -> Result<Void, BusError> {
        guard !ended else {
            continuation.finish()
            return .failure(.closed("the bus went away before the match was installed"))
        }
        let subscription = Subscription(continuation: continuation, tap: tap)
        let userdata = Unmanaged.passUnretained(subscription).toOpaque()
        for rule in rules {
            var slot: OpaquePointer? = nil
            // Synchronous on purpose: when this returns the dbus-daemon routes matching signals to us.
            let result = sd_bus_add_match(bus, &slot, rule.description, signalHandler, userdata)
            guard result >= 0, let slot else {
                for installed in subscription.slots { sd_bus_slot_unref(installed) }
                continuation.finish()
                return .failure(.local("add match \(rule)", returned: result))
            }
            subscription.slots.append(slot)
        }
        let key = ObjectIdentifier(subscription)
        subscriptions[key] = subscription
        continuation.onTermination = { [loop] _ in
            loop?.submit { context in context.removeSubscription(key) }
        }
        return .success(())
    }

    func removeSubscription(_ key: ObjectIdentifier) {
        guard let subscription = subscriptions.removeValue(forKey: key) else { return }
        for slot in subscription.slots { sd_bus_slot_unref(slot) }
        subscription.slots.removeAll()
    }
}

// C callbacks: plain functions at file scope (not closures in main.swift, which Swift 6 would
// isolate to the main actor and which would then trap on the bus thread).

private func wakeHandler(_ source: OpaquePointer?, _ descriptor: Int32, _ events: UInt32, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    Unmanaged<BusThreadContext>.fromOpaque(userdata!).takeUnretainedValue().runJobs()
    return 0
}

private func replyHandler(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
    let entry = Unmanaged<BusThreadContext.PendingCall>.fromOpaque(userdata!).takeUnretainedValue()
    if let message { entry.context.complete(entry, reply: message) }
    return 0
}

private func signalHandler(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
    guard let message, let userdata else { return 0 }
    let subscription = Unmanaged<BusThreadContext.Subscription>.fromOpaque(userdata).takeUnretainedValue()
    BusThreadContext.deliver(message, to: subscription)
    return 0
}

private func disconnectHandler(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
    guard let message else { return 0 }
    // sd-bus synthesizes this local signal when the connection drops.
    if sd_bus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") > 0 {
        Unmanaged<BusThreadContext>.fromOpaque(userdata!).takeUnretainedValue().disconnected()
    }
    return 0
}

extension BusThreadContext {
    fileprivate static func deliver(_ message: OpaquePointer, to subscription: Subscription) {
        func text(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        guard let arguments = try? BusMessageCoding.readAll(message) else { return }
        let signal = BusSignal(
            sender: text(sd_bus_message_get_sender(message)),
            path: text(sd_bus_message_get_path(message)),
            interface: text(sd_bus_message_get_interface(message)),
            member: text(sd_bus_message_get_member(message)),
            arguments: arguments,
            receivedNs: MonotonicTime.nanoseconds()
        )
        subscription.tap?(signal)
        subscription.continuation.yield(signal)
    }
}
