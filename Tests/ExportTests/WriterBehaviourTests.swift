import Testing
import PacerCore
import Export

@Suite(.timeLimit(.minutes(10))) struct WriterBehaviourTests {
    static let start = time("2026-05-10T07:30:00.000Z")

    static func point(_ second: Double, hr: Int? = 150, lat: Double = 45.5, lon: Double = 9.2) -> ExportPoint {
        ExportPoint(time: start.adding(seconds: second), coordinate: Coordinate(latitude: lat, longitude: lon + second * 1e-5),
                    altitude: 120, heartRate: hr, distance: second * 3)
    }

    static func run(name: String = "Run", laps: [ExportLap] = []) -> ExportRun {
        ExportRun(name: name, startTime: start, distance: 100, movingTime: 30, elapsedTime: 30, laps: laps)
    }

    // MARK: escaping

    @Test(arguments: ExportFormat.allCases)
    func runNameIsEscapedEverywhere(format: ExportFormat) throws {
        let collector = ChunkCollector()
        var writer = format.makeWriter(sink: collector.sink)
        try writer.write(Self.run(name: "Tom & \"Jerry\" <3 'em\u{1}"), points: [Self.point(0)])
        let text = collector.text
        let escaped = "Tom &amp; &quot;Jerry&quot; &lt;3 &apos;em\u{FFFD}"
        #expect(text.occurrences(of: escaped) == (format == .gpx ? 2 : 1))
        #expect(!text.contains("Tom & "))
        #expect(!text.contains("<3"))
    }

    // MARK: invalid input

    @Test(arguments: ExportFormat.allCases)
    func invalidCoordinatesAreSkippedAndCounted(format: ExportFormat) throws {
        let collector = ChunkCollector()
        var writer = format.makeWriter(sink: collector.sink)
        try writer.write(Self.run(), points: [
            Self.point(0),
            Self.point(1, lat: .nan),
            Self.point(2, lon: .infinity),
            Self.point(3, lat: -.infinity, lon: .nan),
            Self.point(4, lat: 91),
            Self.point(5, lon: -181),
            Self.point(6),
        ])
        #expect(writer.statistics == ExportStatistics(written: 2, skipped: 5))
        let text = collector.text.lowercased()
        #expect(!text.contains("nan"))
        #expect(!text.contains("inf"))
        #expect(text.occurrences(of: format == .gpx ? "<trkpt " : "<trackpoint>") == 2)
    }

    @Test(arguments: ExportFormat.allCases)
    func nonFiniteOptionalValuesAreLeftOut(format: ExportFormat) throws {
        let collector = ChunkCollector()
        var writer = format.makeWriter(sink: collector.sink)
        var point = Self.point(0)
        point.altitude = .nan
        point.distance = .infinity
        try writer.write(Self.run(), points: [point])
        #expect(writer.statistics == ExportStatistics(written: 1))
        let text = collector.text
        #expect(!text.lowercased().contains("nan") && !text.lowercased().contains("inf"))
        #expect(!text.contains("<ele>") && !text.contains("<AltitudeMeters>"))
        #expect(!text.contains("<DistanceMeters>inf"))
    }

    @Test(arguments: ExportFormat.allCases)
    func impossibleHeartRatesAreDroppedNotThePoints(format: ExportFormat) throws {
        let collector = ChunkCollector()
        var writer = format.makeWriter(sink: collector.sink)
        try writer.write(Self.run(), points: [Self.point(0, hr: 0), Self.point(1, hr: 255), Self.point(2, hr: -1),
                                              Self.point(3, hr: 1), Self.point(4, hr: nil)])
        #expect(writer.statistics == ExportStatistics(written: 5, droppedHeartRates: 3))
        let tag = format == .gpx ? "<gpxtpx:hr>" : "<Value>"
        #expect(collector.text.occurrences(of: tag) == 1)
        #expect(collector.text.contains(tag + "1<"))
    }

    // MARK: call order and sink errors

    @Test(arguments: ExportFormat.allCases)
    func callsOutOfOrderThrow(format: ExportFormat) throws {
        var writer = format.makeWriter(sink: { _ in })
        #expect(throws: ExportError.notBegun) { try writer.add(Self.point(0)) }
        #expect(throws: ExportError.notBegun) { try writer.end() }
        try writer.begin(Self.run())
        #expect(throws: ExportError.alreadyBegun) { try writer.begin(Self.run()) }
        try writer.add(Self.point(0))
        try writer.end()
        #expect(throws: ExportError.alreadyEnded) { try writer.add(Self.point(1)) }
        #expect(throws: ExportError.alreadyEnded) { try writer.end() }
        #expect(throws: ExportError.alreadyEnded) { try writer.begin(Self.run()) }
    }

    struct DiskFull: Error, Equatable {}

    @Test(arguments: ExportFormat.allCases)
    func aSinkErrorIsPassedOnAndEndsTheWriter(format: ExportFormat) throws {
        var calls = 0
        var writer = format.makeWriter(sink: { _ in
            calls += 1
            if calls == 3 { throw DiskFull() }
        })
        try writer.begin(Self.run())
        try writer.add(Self.point(0))
        #expect(throws: DiskFull()) { try writer.add(Self.point(1)) }
        #expect(throws: ExportError.sinkFailed) { try writer.add(Self.point(2)) }
        #expect(throws: ExportError.sinkFailed) { try writer.end() }
        #expect(calls == 3)
    }

    // MARK: TCX laps

    /// Laps at 0 s, 10 s, 20 s and 40 s; points from −2 s to 24 s. The first lap also takes the
    /// points before its start, the last lap gets no points and so no Track.
    @Test func tcxLapsSplitAtLapStartTimes() throws {
        let laps = [
            ExportLap(startTime: Self.start, time: 10, distance: 30, averageHeartRate: 148.4, maxHeartRate: 160),
            ExportLap(startTime: Self.start.adding(seconds: 10), time: 10, distance: 31),
            ExportLap(startTime: Self.start.adding(seconds: 20), time: 20, distance: 29.5),
            ExportLap(startTime: Self.start.adding(seconds: 40), time: 5, distance: 0),
        ]
        let points = (-2...24).map { Self.point(Double($0)) }
        let collector = ChunkCollector()
        var writer = TCXWriter(sink: collector.sink)
        try writer.begin(Self.run(laps: laps))
        for point in points {
            let before = collector.chunks.count
            try writer.add(point)
            // Each point is handed out during its own `add` (no buffering)...
            #expect(collector.chunks.count > before)
            #expect(collector.chunks.last?.contains("<Time>\(point.time.iso8601)</Time>") == true)
        }
        try writer.end()

        let lapTexts = collector.text.components(separatedBy: "<Lap StartTime=").dropFirst()
        #expect(lapTexts.count == 4)
        let pointsPerLap = lapTexts.map { $0.occurrences(of: "<Trackpoint>") }
        #expect(pointsPerLap == [12, 10, 5, 0])
        let tracks = lapTexts.map { $0.occurrences(of: "<Track>") }
        #expect(tracks == [1, 1, 1, 0])
        #expect(collector.text.occurrences(of: "</Track>") == 3)
        #expect(collector.text.occurrences(of: "</Lap>") == 4)
        let lapList = Array(lapTexts)
        #expect(lapList[0].hasPrefix("\"2026-05-10T07:30:00.000Z\">"))
        #expect(lapList[1].hasPrefix("\"2026-05-10T07:30:10.000Z\">"))
        #expect(lapList[0].contains("<TotalTimeSeconds>10.000</TotalTimeSeconds>\n        <DistanceMeters>30.00</DistanceMeters>"))
        #expect(lapList[0].contains("<AverageHeartRateBpm>\n          <Value>148</Value>"))
        #expect(lapList[0].contains("<MaximumHeartRateBpm>\n          <Value>160</Value>"))
        #expect(!lapList[1].contains("HeartRateBpm>\n          <Value>"))
        #expect(lapList[2].contains("<DistanceMeters>29.50</DistanceMeters>"))
        // The first point of lap 2 is the one at exactly 10 s.
        #expect(lapList[1].contains("<Track>\n          <Trackpoint>\n            <Time>2026-05-10T07:30:10.000Z</Time>"))
        #expect(lapList[2].contains("<Time>2026-05-10T07:30:24.000Z</Time>"))
    }

    @Test func tcxGapOverSeveralLapsWritesTheEmptyOnes() throws {
        let laps = (0..<5).map { ExportLap(startTime: Self.start.adding(seconds: Double($0 * 10)), time: 10, distance: 30) }
        let (output, _) = try ChunkCollector.tcx(Self.run(laps: laps), [Self.point(1), Self.point(45)])
        let lapTexts = output.text.components(separatedBy: "<Lap StartTime=").dropFirst()
        #expect(lapTexts.map { $0.occurrences(of: "<Trackpoint>") } == [1, 0, 0, 0, 1])
        #expect(lapTexts.map { $0.occurrences(of: "<Track>") } == [1, 0, 0, 0, 1])
    }

    @Test func tcxTimeGoingBackwardsStaysInTheOpenLap() throws {
        let laps = [ExportLap(startTime: Self.start, time: 10, distance: 30),
                    ExportLap(startTime: Self.start.adding(seconds: 10), time: 10, distance: 30)]
        let (output, statistics) = try ChunkCollector.tcx(Self.run(laps: laps), [Self.point(9), Self.point(11), Self.point(5)])
        #expect(statistics.writtenPoints == 3)
        let lapTexts = output.text.components(separatedBy: "<Lap StartTime=").dropFirst()
        #expect(lapTexts.map { $0.occurrences(of: "<Trackpoint>") } == [1, 2])
    }

    @Test func tcxRejectsLapsItCannotWrite() {
        let good = ExportLap(startTime: Self.start, time: 10, distance: 30)
        let cases: [[ExportLap]] = [
            [good, ExportLap(startTime: Self.start.adding(seconds: -5), time: 10, distance: 30)],
            [ExportLap(startTime: Self.start, time: .nan, distance: 30)],
            [ExportLap(startTime: Self.start, time: 10, distance: -1)],
            [ExportLap(startTime: Self.start, time: 10, distance: .infinity)],
        ]
        for laps in cases {
            var writer = TCXWriter(sink: { _ in Issue.record("wrote despite invalid laps") })
            #expect(throws: ExportError.self) { try writer.begin(Self.run(laps: laps)) }
        }
        var writer = TCXWriter(sink: { _ in })
        var run = Self.run()
        run.elapsedTime = .nan
        #expect(throws: ExportError.invalidRun("run: time nan s is not a finite, non-negative number")) {
            try writer.begin(run)
        }
    }

    @Test func gpxIgnoresLapsAndTotals() throws {
        var run = Self.run(laps: [ExportLap(startTime: Self.start, time: .nan, distance: -3)])
        run.distance = .nan
        let (output, statistics) = try ChunkCollector.gpx(run, [Self.point(0)])
        #expect(statistics.writtenPoints == 1)
        #expect(output.text.hasSuffix("</gpx>\n"))
    }
}
