import Foundation
import PacerTestSupport
import Testing

/// The python3 the scenario tools run with (stdlib only), if there is one.
private let collapseScenarioPython = ["/usr/bin/python3", "/usr/local/bin/python3"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// Issue #30's collapse and strap-fault scenarios, the body and the heart simulated together:
/// tools/hr-scenarios writes every kind over its routes (seeds 1 and 2) into a temporary
/// directory, and tools/check-hr-scenarios replays each through the built pacerctl and judges
/// its alerts against the truth (breaches within 5 s of their first sample, collapses within
/// 15 s of max(onset, body stop), nothing else raised). Its table is the failure message.
@Suite(.timeLimit(.minutes(10)), .enabled(if: collapseScenarioPython != nil, "needs python3"))
struct CollapseScenarioTests {
    static let python = collapseScenarioPython
    static let tools = PacerCtlTests.repositoryRoot + "/tools"

    @Test func everyScenarioRaisesExactlyWhatItsTruthSays() async throws {
        let python = try #require(Self.python)
        let directory = NSTemporaryDirectory() + "pacer-collapse-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let generated = try await offPool {
            try DaemonFixture.runBlocking(python, [Self.tools + "/hr-scenarios", "generate", "--out", directory, "--seeds", "1,2"])
        }
        try #require(generated.status == 0, "hr-scenarios generate failed (\(generated.status)): \(generated.stderr)")

        let checked = try await offPool {
            try DaemonFixture.runBlocking(python, [Self.tools + "/check-hr-scenarios", "--pacerctl", PacerCtlTests.binary, "--dir", directory])
        }
        #expect(checked.status == 0, "check-hr-scenarios exited \(checked.status):\n\(checked.stdout)\(checked.stderr)")
    }
}
