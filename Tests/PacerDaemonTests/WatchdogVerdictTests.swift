@testable import PacerDaemon
import Testing

/// WATCHDOG=1 needs both loops: the pipeline's and the SOS lane's. Injected times, no daemon.
@Suite(.timeLimit(.minutes(10))) struct WatchdogVerdictTests {
    static let second: UInt64 = 1_000_000_000

    @Test func bothTurningIsHealthy() {
        #expect(WatchdogService.stuck(nowNs: 100 * Self.second, pipelineTurnNs: 99 * Self.second, laneTurnNs: 100 * Self.second - Self.second / 4) == nil)
    }

    @Test func aStuckPipelineWithholdsThePing() throws {
        let stuck = try #require(WatchdogService.stuck(nowNs: 100 * Self.second, pipelineTurnNs: 96 * Self.second, laneTurnNs: 100 * Self.second))
        #expect(stuck.contains("pipeline"))
    }

    /// The rest of pacerd turning does not hide an SOS lane that hangs.
    @Test func aStuckLaneWithholdsThePing() throws {
        let stuck = try #require(WatchdogService.stuck(nowNs: 100 * Self.second, pipelineTurnNs: 100 * Self.second, laneTurnNs: 97 * Self.second))
        #expect(stuck.contains("SOS lane has not turned for 3000 ms"))
    }

    @Test func aLaneThatIsNotRunningIsNotWatched() {
        #expect(WatchdogService.stuck(nowNs: 100 * Self.second, pipelineTurnNs: 100 * Self.second, laneTurnNs: nil) == nil)
    }
}
