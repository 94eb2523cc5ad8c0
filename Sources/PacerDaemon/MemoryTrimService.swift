import SOS
import ServiceLifecycle

/// Trims pacerd's resident memory (see `ResidentMemory`) once start-up has settled, then every
/// ten minutes, so code that ran once (start-up, a reload, an upload round's TLS set-up) does not
/// stay resident for a three-hour run. A page still in use comes back on its next touch, a minor
/// fault of well under a microsecond. The SOS lane then rehearses its alert path (nothing sent,
/// stored or said), so the first real alert does not wait for pages read back from the SD card.
struct MemoryTrimService: Service {
    let log: DaemonLog
    let sos: SOSLane
    static let firstAfter: Duration = .seconds(15)
    static let every: Duration = .seconds(600)

    func run() async throws {
        var wait = Self.firstAfter
        var first = true
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            // Interrupted by shutdown: the nap must not hold up SIGTERM.
            let nap = wait
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: nap) }
            if Task.isShuttingDownGracefully || Task.isCancelled { return }
            let before = ResidentMemory.residentKiB()
            ResidentMemory.trim()
            if first, let before, let after = ResidentMemory.residentKiB() {
                log(.info, "daemon", "resident memory trimmed after start-up: \(before / 1024) MB -> \(after / 1024) MB")
            }
            // Not awaited: a lane that is busy or stopping must not hold up this service.
            sos.put(.rehearse(reply: { [log, first] cost in
                // The page faults it took are the alert path the trim had unmapped; major ones came
                // from the disk. Told after the first trim, and whenever the disk was needed.
                guard first || cost.majorFaults > 0 else { return }
                log(.info, "sos", "alert path touched again after the memory trim: \(cost.minorFaults) minor and \(cost.majorFaults) major page faults, \(cost.microseconds) µs")
            }))
            first = false
            wait = Self.every
        }
    }
}
