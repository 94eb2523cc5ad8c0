import Testing
import PacerCore
import Export

/// A 3 h 40 min run at 1 Hz (13,200 points): the writers hand it out in small chunks as it
/// comes, and the same input always gives the same bytes.
@Suite(.timeLimit(.minutes(10))) struct StreamingTests {
    static let synthetic = SyntheticRun()

    @Test(arguments: ExportFormat.allCases)
    func longRunStreamsInSmallChunks(format: ExportFormat) throws {
        let synthetic = Self.synthetic
        let collector = ChunkCollector()
        var writer = format.makeWriter(sink: collector.sink)
        try writer.begin(synthetic.run)
        var silentAdds = 0
        for point in synthetic.points {
            let before = collector.chunks.count
            try writer.add(point)
            if collector.chunks.count == before { silentAdds += 1 }
        }
        try writer.end()

        // Only the skipped points produce no output; every other point leaves during its `add`.
        #expect(silentAdds == synthetic.invalidCount)
        #expect(writer.statistics == ExportStatistics(written: synthetic.expected.count, skipped: synthetic.invalidCount))
        #expect(collector.chunks.count >= synthetic.expected.count + 2)
        let total = collector.chunks.reduce(0) { $0 + $1.utf8.count }
        #expect(total > 2_500_000, "a 13,200-point document is megabytes")
        #expect(collector.largestChunk <= 1024, "largest chunk \(collector.largestChunk) bytes")
        #expect(synthetic.run.laps.count >= 39)
        if format == .tcx {
            #expect(collector.text.occurrences(of: "<Lap StartTime=") == synthetic.run.laps.count)
        }
    }

    @Test(arguments: ExportFormat.allCases)
    func sameInputSameBytes(format: ExportFormat) throws {
        func render() throws -> [String] {
            let collector = ChunkCollector()
            var writer = format.makeWriter(sink: collector.sink)
            try writer.write(Self.synthetic.run, points: Self.synthetic.points)
            return collector.chunks
        }
        let first = try render()
        let second = try render()
        #expect(first == second)
        #expect(Array(first.joined().utf8) == Array(second.joined().utf8))
    }
}
