import BlueZ
import Foundation
import PacerCore
import PacerTestSupport
import Synchronization
import Systemd

/// The strap client under test, running against a BluetoothSimulator, with every event it
/// reports kept (with the monotonic time it was seen) for the test to look at.
final class StrapClientFixture: Sendable {
    let simulator: BluetoothSimulator
    let client: HeartRateStrapClient
    private let task: Task<Void, Never>
    private let consumer: Task<Void, Never>
    private final class Log: Sendable {
        let entries = Mutex<[(event: StrapEvent, at: ContinuousClock.Instant)]>([])
    }
    private let log = Log()
    /// What the bus-thread tap saw: the value, its receipt time, the thread, and when.
    struct Tapped: Sendable {
        var value: [UInt8]
        var receivedNs: UInt64
        var thread: UInt
        var at: ContinuousClock.Instant
    }
    final class TapLog: Sendable { let entries = Mutex<[Tapped]>([]) }
    private let tapLog = TapLog()
    var tapped: [Tapped] { tapLog.entries.withLock { $0 } }

    init(simulator: BluetoothSimulator, straps: [String], minimumBackoff: Duration = .milliseconds(250)) {
        self.simulator = simulator
        let address = simulator.address
        let tapLog = self.tapLog
        client = HeartRateStrapClient(
            configuration: StrapClientConfiguration(straps: straps.compactMap(StrapAddress.init), minimumBackoff: minimumBackoff),
            openBus: { () throws(BusError) in try BusConnection.connect(address: address) },
            onNotification: { _, value, receivedNs in
                let entry = Tapped(value: value, receivedNs: receivedNs, thread: UInt(pthread_self()), at: .now)
                tapLog.entries.withLock { $0.append(entry) }
            })
        let client = self.client
        task = Task { await client.run() }
        let log = self.log
        consumer = Task {
            for await event in client.events { log.entries.withLock { $0.append((event, .now)) } }
        }
    }

    func stop() async {
        task.cancel()
        await task.value
        await consumer.value
    }

    var events: [StrapEvent] { log.entries.withLock { $0.map(\.event) } }

    func events(since instant: ContinuousClock.Instant) -> [(event: StrapEvent, at: ContinuousClock.Instant)] {
        log.entries.withLock { $0.filter { $0.at >= instant } }
    }

    /// Waits (without blocking the cooperative pool) until `predicate` holds for the events so far.
    @discardableResult
    func wait(timeout: Duration = .seconds(15), _ what: String, _ predicate: ([StrapEvent]) -> Bool) async throws -> [StrapEvent] {
        var seen = events
        let held = await eventually(timeout: timeout, every: .milliseconds(20)) {
            seen = events
            return predicate(seen)
        }
        guard held else {
            throw FixtureTimeout(description: "no \(what) within \(timeout); events: \(seen.suffix(12)); simulator log: \(simulator.log().suffix(2000))")
        }
        return seen
    }

    /// The sequence numbers the simulator put in the RR field, in arrival order.
    var sequenceNumbers: [Int] {
        events.compactMap { event in
            guard case .notification(_, let value, _) = event, case .success(let measurement) = HeartRateMeasurement.decode(value),
                  let sequence = measurement.rrIntervalsRaw.first else { return nil }
            return Int(sequence)
        }
    }

    var notificationCount: Int {
        events.count { if case .notification = $0 { true } else { false } }
    }

    static func connectedCount(_ events: [StrapEvent]) -> Int {
        events.count { if case .connected = $0 { true } else { false } }
    }

    /// Missing numbers between consecutive received ones.
    static func gaps(_ sequence: [Int]) -> Int {
        zip(sequence, sequence.dropFirst()).reduce(0) { $0 + max(0, $1.1 - $1.0 - 1) }
    }
}

struct FixtureTimeout: Error, CustomStringConvertible {
    let description: String
}

extension BluetoothSimulator {
    static func start(_ scenario: Scenario) async throws -> BluetoothSimulator {
        try await offPool { try BluetoothSimulator(scenario) }
    }

    /// A control call, off the cooperative pool (busctl runs as a child process).
    func run(_ body: @escaping @Sendable (BluetoothSimulator) throws -> Void) async throws {
        try await offPool { try body(self) }
    }
}
