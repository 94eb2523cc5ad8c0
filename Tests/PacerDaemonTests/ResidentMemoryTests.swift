@testable import PacerDaemon
import PacerCore
import SOS
import Testing

/// The trim unmaps only read-only segments: code and constants come back on their next touch,
/// and nothing written is lost.
@Suite(.timeLimit(.minutes(10))) struct ResidentMemoryTests {
    @Test func trimmingGivesPagesBackAndEverythingStillWorks() throws {
        // Touch code and keep data that must survive the trim.
        var written = [Int](repeating: 0, count: 100_000)
        for index in written.indices { written[index] = index &* 31 }
        let text = (0..<1000).map { String($0) }.joined(separator: ",")
        let before = try #require(ResidentMemory.residentKiB())

        let advised = ResidentMemory.trim()

        let after = try #require(ResidentMemory.residentKiB())
        #expect(advised > 1 << 20, "the test binary's own code segment alone is megabytes")
        #expect(after < before, "RSS \(before) KiB before, \(after) KiB after")
        // Writable memory is untouched, and code runs again as before.
        #expect(written.enumerated().allSatisfy { $0.element == $0.offset &* 31 })
        #expect(text == (0..<1000).map { String($0) }.joined(separator: ","))
        #expect(ResidentMemory.trim() > 0)
    }
}

/// After a trim the SOS lane rehearses its alert path: the rehearsal takes the page faults the
/// first real alert would otherwise take.
@Suite(.timeLimit(.minutes(10))) struct AlertPathRehearsalTests {
    static func rehearse(_ lane: SOSLane) async -> LaneRehearsal {
        await withCheckedContinuation { continuation in lane.put(.rehearse(reply: { continuation.resume(returning: $0) })) }
    }

    @Test func aRehearsalAfterATrimTouchesTheAlertPathAgain() async throws {
        var rules = SOSRules()
        rules.enabled = true
        let lane = SOSLane()
        try lane.start(settings: LaneSettings(rules: rules, contacts: ["+393470000001"], alertsURL: "https://pacer.example.org/v1/alerts",
                                              deviceName: "pacer-test"),
                       store: nil, channels: [], log: { _, _, _ in })
        _ = await Self.rehearse(lane)
        // Page tables are the process's: another thread of this test process that runs the same
        // code between the trim and the rehearsal maps its pages first. Hence several rounds, and
        // the claim that at least one of them found the alert path unmapped.
        var rounds: [(afterTrim: LaneRehearsal, again: LaneRehearsal)] = []
        for _ in 0..<5 {
            ResidentMemory.trim()
            let afterTrim = await Self.rehearse(lane)
            rounds.append((afterTrim, await Self.rehearse(lane)))
        }
        print("alert path rehearsal, minor faults after a trim: \(rounds.map(\.afterTrim.minorFaults)), then again: \(rounds.map(\.again.minorFaults)); "
              + "µs after a trim: \(rounds.map(\.afterTrim.microseconds)), again: \(rounds.map(\.again.microseconds))")
        #expect(rounds.contains { $0.afterTrim.minorFaults + $0.afterTrim.majorFaults > $0.again.minorFaults + $0.again.majorFaults },
                "the trim unmapped the alert path and the rehearsal mapped it again")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in lane.put(.shutdown(done: { continuation.resume() })) }
    }
}
