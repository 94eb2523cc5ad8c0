import Foundation
import GPSD
import PacerTestSupport
import Synchronization

/// Consumes a client's events on a task of its own and keeps them, so a test can wait for a
/// condition on what arrived so far.
final class EventLog: Sendable {
    private final class Storage: Sendable {
        let events = Mutex<[GPSDEvent]>([])
        let finished = Atomic<Bool>(false)
    }

    private let storage = Storage()
    let consumer: Task<Void, Never>

    init(_ client: GPSDClient) {
        let storage = self.storage
        consumer = Task {
            for await event in client.events { storage.events.withLock { $0.append(event) } }
            storage.finished.store(true, ordering: .releasing)
        }
    }

    var snapshot: [GPSDEvent] { storage.events.withLock { $0 } }

    /// True once the client's stream has finished.
    var isFinished: Bool { storage.finished.load(ordering: .acquiring) }

    /// Waits until `condition` holds for the events so far; false on timeout.
    func wait(timeout: Duration, until condition: ([GPSDEvent]) -> Bool) async -> Bool {
        await eventually(timeout: timeout, every: .milliseconds(5)) { condition(snapshot) }
    }

    func waitUntilFinished(timeout: Duration) async -> Bool {
        await wait(timeout: timeout) { _ in self.isFinished }
    }
}

extension [GPSDEvent] {
    var lines: [String] {
        compactMap { if case .line(let text, _) = $0 { text } else { nil } }
    }

    /// TPV `time` values of the lines, in arrival order, without repeats (gpsd sends one TPV per
    /// sentence that updates the fix, so several per epoch).
    var tpvTimes: [String] { Self.distinctTPVTimes(lines) }

    static func distinctTPVTimes(_ lines: [String]) -> [String] {
        var seen = Set<String>()
        return lines.compactMap { line -> String? in
            guard RawJSON.className(of: line) == "TPV",
                let quoted = RawJSON.value("time", in: line)
            else { return nil }
            let time = String(quoted.dropFirst().dropLast())
            return seen.insert(time).inserted ? time : nil
        }
    }

    func count(where matches: (GPSDEvent) -> Bool) -> Int { filter(matches).count }

    var connections: [UInt64] {
        compactMap { if case .connected(let at) = $0 { at } else { nil } }
    }

    var disconnections: [String] {
        compactMap { if case .disconnected(let reason, _) = $0 { reason } else { nil } }
    }

    /// Events after the `n`-th `.connected` (1-based).
    func after(connection n: Int) -> ArraySlice<GPSDEvent> {
        var seen = 0
        for (index, event) in enumerated() {
            if case .connected = event {
                seen += 1
                if seen == n { return self[(index + 1)...] }
            }
        }
        return []
    }
}

extension ArraySlice<GPSDEvent> {
    var tpvLines: Int {
        filter { if case .line(let text, _) = $0 { RawJSON.className(of: text) == "TPV" } else { false } }.count
    }
}

func milliseconds(_ nanoseconds: Int64) -> String {
    String(format: "%.1f ms", Double(nanoseconds) / 1e6)
}
