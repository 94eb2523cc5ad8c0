import PacerTestSupport
import Synchronization
import Testing
@testable import Systemd

#if canImport(Glibc)
import Glibc
#endif

/// The bus thread's own seams: a disconnect staged at an exact moment, which a real dbus-daemon
/// going away hits only by chance.
@Suite struct BusDisconnectTests {
    final class Flag: Sendable {
        private let state = Mutex(false)
        func set() { state.withLock { $0 = true } }
        var isSet: Bool { state.withLock { $0 } }
    }

    final class Outcome: Sendable {
        private let state = Mutex<Result<[BusValue], BusError>?>(nil)
        func set(_ result: Result<[BusValue], BusError>) { state.withLock { $0 = result } }
        var value: Result<[BusValue], BusError>? { state.withLock { $0 } }
    }

    static let getID = BusMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                     member: "GetId")

    /// A call handed in while the bus thread is busy, and the bus then gone before the thread
    /// takes it: the call fails as closed, it does not wait for ever (an SOS text stuck "in
    /// flight" never retried, issue 17).
    @Test(.timeLimit(.minutes(10))) func aCallQueuedWhenTheBusGoesAwayFailsInsteadOfWaiting() async throws {
        let bus = try await offPool { try PrivateBus() }
        defer { bus.stop() }
        let connection = try BusConnection.connect(address: bus.address)
        let holding = Flag()
        connection.loop.submit { context in
            holding.set()
            // Until the call below is queued behind this job (at most 10 s), then the bus goes away.
            for _ in 0..<10_000 where connection.loop.queuedJobs == 0 { usleep(1000) }
            context.disconnected()
        }
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(5)) { holding.isSet }

        // Unstructured, and waited for with a bound: a call that hangs must fail the test, not hang it.
        let outcome = Outcome()
        Task {
            do throws(BusError) { outcome.set(.success(try await connection.call(Self.getID, timeout: .seconds(5)))) } catch { outcome.set(.failure(error)) }
        }
        try? await waitOffPool(timeout: .seconds(20), every: .milliseconds(10)) { outcome.value != nil }
        switch outcome.value {
        case nil: Issue.record("the call queued on a bus that went away never completed")
        case .success(let reply)?: Issue.record("a call was answered after the bus went away: \(reply)")
        case .failure(let error)?: #expect(error.isClosed, "\(error)")
        }
        await connection.waitUntilClosed()
        #expect(!connection.isOpen)
    }
}
