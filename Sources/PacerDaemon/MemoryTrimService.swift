import ServiceLifecycle

/// Trims pacerd's resident memory (see `ResidentMemory`) once start-up has settled, then every
/// ten minutes, so code that ran once (start-up, a reload, an upload round's TLS set-up) does not
/// stay resident for a three-hour run. A page still in use comes back on its next touch, a minor
/// fault of well under a microsecond.
struct MemoryTrimService: Service {
    let log: DaemonLog
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
            first = false
            wait = Self.every
        }
    }
}
