@testable import PacerDaemon
import Testing

/// The trim unmaps only read-only segments: code and constants come back on their next touch,
/// and nothing written is lost.
@Suite struct ResidentMemoryTests {
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
