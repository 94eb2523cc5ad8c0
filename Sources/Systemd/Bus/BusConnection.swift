internal import CSystemd
import Synchronization
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus connection over sd-bus. sd-bus is not thread-safe, so one thread owns the bus and runs
/// its event loop; calls and subscriptions are handed to it through a queue and an eventfd, and
/// answers come back as async results and AsyncStreams of Sendable values.
///
/// When the bus goes away (dbus-daemon stopped, socket closed) every pending call fails with a
/// `BusError` whose `isClosed` is true, every signal stream ends, and `closed` finishes: open a
/// new connection to carry on.
public final class BusConnection: Sendable {
    /// Internal for the tests, which hold the bus thread to stage a disconnect.
    let loop: BusLoop

    /// The system bus, or the one DBUS_SYSTEM_BUS_ADDRESS names (sd_bus_open_system honours it).
    public static func system() throws(BusError) -> BusConnection {
        var bus: OpaquePointer? = nil
        let result = sd_bus_open_system(&bus)
        guard result >= 0, let bus else { throw .local("sd_bus_open_system", returned: result) }
        return try BusConnection(bus: bus)
    }

    /// A bus at an explicit address such as `unix:path=/tmp/x/bus`.
    public static func connect(address: String) throws(BusError) -> BusConnection {
        var bus: OpaquePointer? = nil
        var result = sd_bus_new(&bus)
        guard result >= 0, let bus else { throw .local("sd_bus_new", returned: result) }
        result = sd_bus_set_address(bus, address)
        if result >= 0 { result = sd_bus_set_bus_client(bus, 1) }
        if result >= 0 { result = sd_bus_start(bus) }
        guard result >= 0 else {
            sd_bus_unref(bus)
            throw .local("connect to \(address)", returned: result)
        }
        return try BusConnection(bus: bus)
    }

    private init(bus: OpaquePointer) throws(BusError) {
        loop = try BusLoop(bus: bus)
        do {
            try DetachedThread.start { [loop] in loop.run() }
        } catch {
            loop.abandon()
            throw BusError(name: "pacer.Bus.LocalError", message: error.description)
        }
    }

    deinit { loop.close() }

    /// Calls a method and returns the reply's arguments. `timeout` nil: sd-bus's default (25 s).
    public func call(_ call: BusMethodCall, timeout: Duration? = nil) async throws(BusError) -> [BusValue] {
        let microseconds = timeout.map { UInt64(max(1, $0.components.seconds * 1_000_000 + $0.components.attoseconds / 1_000_000_000_000)) } ?? 0
        let result: Result<[BusValue], BusError> = await withCheckedContinuation { continuation in
            let accepted = loop.submit { context in
                context.startCall(call, timeoutMicroseconds: microseconds, continuation: continuation)
            }
            if !accepted { continuation.resume(returning: .failure(.closed("the bus connection is closed"))) }
        }
        return try result.get()
    }

    /// Signals matching `rule`, from the moment this returns (the match is installed at the bus
    /// by then, so a call made afterwards cannot race ahead of its signal). The stream ends when
    /// the caller stops iterating or the connection ends.
    public func signals(matching rule: BusMatchRule, bufferingNewest limit: Int = 1024) async throws(BusError) -> AsyncStream<BusSignal> {
        try await signals(matching: [rule], bufferingNewest: limit)
    }

    /// Signals matching any of `rules`, in one stream, in the order the bus delivered them.
    /// `tap`, if given, sees each one first, on the bus thread itself: for a reader that must not
    /// wait on the cooperative pool (the SOS lane's heart rate). It must be quick and never block.
    public func signals(matching rules: [BusMatchRule], bufferingNewest limit: Int = 1024,
                        tap: (@Sendable (BusSignal) -> Void)? = nil) async throws(BusError) -> AsyncStream<BusSignal> {
        let (stream, continuation) = AsyncStream.makeStream(of: BusSignal.self, bufferingPolicy: .bufferingNewest(limit))
        let installed: Result<Void, BusError> = await withCheckedContinuation { done in
            let accepted = loop.submit { context in
                done.resume(returning: context.addMatches(rules, continuation: continuation, tap: tap))
            }
            if !accepted { done.resume(returning: .failure(.closed("the bus connection is closed"))) }
        }
        try installed.get()
        return stream
    }

    /// Whether the connection is still usable.
    public var isOpen: Bool { !loop.isClosed }

    /// Waits until the connection has ended, by `close()` or because the bus went away.
    public func waitUntilClosed() async { await loop.waitUntilClosed() }

    /// Ends the connection: pending calls fail, signal streams finish.
    public func close() { loop.close() }
}
