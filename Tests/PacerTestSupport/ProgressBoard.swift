import Dispatch
import Foundation
import Synchronization

/// Where each running fixture is (its label and phase since when), printed to standard error
/// when the test process gets SIGUSR1: a test that hangs in async code leaves no thread stack to
/// read (its task is only suspended), so tools/test sends the signal before it stops a phase,
/// and the log says which fixture waited in which phase.
public enum ProgressBoard {
    private struct Entry {
        var label: String
        var phase: String
        var since: ContinuousClock.Instant
    }

    private static let entries = Mutex<[UInt64: Entry]>([:])
    private static let nextID = Atomic<UInt64>(0)
    /// The SIGUSR1 handler, installed by the first fixture (kept here: a source released stops).
    private static let signalSource = Mutex<(any DispatchSourceSignal)?>(nil)

    private static func installHandler() {
        signalSource.withLock { installed in
            guard installed == nil else { return }
            signal(SIGUSR1, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: DispatchQueue(label: "progress-board"))
            source.setEventHandler { ProgressBoard.dump() }
            source.resume()
            installed = source
        }
    }

    /// A fixture starting; its id for `step` and `leave`.
    public static func enter(_ label: String, phase: String) -> UInt64 {
        installHandler()
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        entries.withLock { $0[id] = Entry(label: label, phase: phase, since: .now) }
        return id
    }

    public static func step(_ id: UInt64, _ phase: String) {
        entries.withLock { $0[id]?.phase = phase; $0[id]?.since = .now }
    }

    public static func leave(_ id: UInt64) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }

    /// Every fixture still running, the longest-waiting first.
    public static func dump() {
        let now = ContinuousClock.now
        let lines = entries.withLock { Array($0.values) }.sorted { $0.since < $1.since }.map { entry in
            "progress-board: \(entry.label): \(entry.phase) for \(now - entry.since)"
        }
        FileHandle.standardError.write(Data(((lines.isEmpty ? ["progress-board: no fixture running"] : lines).joined(separator: "\n") + "\n").utf8))
    }
}
