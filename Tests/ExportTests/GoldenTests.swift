import Testing
import PacerCore
@testable import Export

/// Whole documents for a small run, byte for byte: structure, element order (as the GPX 1.1
/// and TCX v2 schemas require it), namespaces, number formats and escaping.
@Suite(.timeLimit(.minutes(10))) struct GoldenTests {
    static let run = ExportRun(
        name: "Park & <run>", startTime: time("2026-05-10T07:30:00.000Z"), distance: 6.5,
        movingTime: 2, elapsedTime: 2, averageHeartRate: 141.5, maxHeartRate: 143)

    static let points = [
        ExportPoint(time: time("2026-05-10T07:30:00.000Z"),
                    coordinate: Coordinate(latitude: 45.503_503_41, longitude: 9.179_49),
                    altitude: 121.04, heartRate: 140, distance: 0),
        // No altitude, no heart rate; a longitude that rounds to 0 is written without a sign.
        ExportPoint(time: time("2026-05-10T07:30:01.000Z"),
                    coordinate: Coordinate(latitude: -33.856_784_4, longitude: -0.000_000_04),
                    heartRate: nil, distance: 3.256),
        // Rounds to +180, written as −180; negative altitude rounds away from zero.
        ExportPoint(time: time("2026-05-10T07:30:02.500Z"),
                    coordinate: Coordinate(latitude: 45.5035, longitude: 179.999_999_96),
                    altitude: -2.25, heartRate: 143),
    ]

    @Test func gpxDocument() throws {
        let (output, statistics) = try ChunkCollector.gpx(Self.run, Self.points)
        #expect(statistics == ExportStatistics(written: 3))
        #expect(output.text == """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="Pacer" xmlns="http://www.topografix.com/GPX/1/1" \
            xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd \
            http://www.garmin.com/xmlschemas/TrackPointExtension/v1 http://www.garmin.com/xmlschemas/TrackPointExtensionv1.xsd">
              <metadata>
                <name>Park &amp; &lt;run&gt;</name>
                <time>2026-05-10T07:30:00.000Z</time>
              </metadata>
              <trk>
                <name>Park &amp; &lt;run&gt;</name>
                <type>running</type>
                <trkseg>
                  <trkpt lat="45.5035034" lon="9.1794900">
                    <ele>121.0</ele>
                    <time>2026-05-10T07:30:00.000Z</time>
                    <extensions>
                      <gpxtpx:TrackPointExtension>
                        <gpxtpx:hr>140</gpxtpx:hr>
                      </gpxtpx:TrackPointExtension>
                    </extensions>
                  </trkpt>
                  <trkpt lat="-33.8567844" lon="0.0000000">
                    <time>2026-05-10T07:30:01.000Z</time>
                  </trkpt>
                  <trkpt lat="45.5035000" lon="-180.0000000">
                    <ele>-2.3</ele>
                    <time>2026-05-10T07:30:02.500Z</time>
                    <extensions>
                      <gpxtpx:TrackPointExtension>
                        <gpxtpx:hr>143</gpxtpx:hr>
                      </gpxtpx:TrackPointExtension>
                    </extensions>
                  </trkpt>
                </trkseg>
              </trk>
            </gpx>

            """)
    }

    @Test func tcxDocument() throws {
        let (output, statistics) = try ChunkCollector.tcx(Self.run, Self.points)
        #expect(statistics == ExportStatistics(written: 3))
        #expect(output.text == """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2 \
            http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd">
              <Activities>
                <Activity Sport="Running">
                  <Id>2026-05-10T07:30:00.000Z</Id>
                  <Lap StartTime="2026-05-10T07:30:00.000Z">
                    <TotalTimeSeconds>2.000</TotalTimeSeconds>
                    <DistanceMeters>6.50</DistanceMeters>
                    <Calories>0</Calories>
                    <AverageHeartRateBpm>
                      <Value>142</Value>
                    </AverageHeartRateBpm>
                    <MaximumHeartRateBpm>
                      <Value>143</Value>
                    </MaximumHeartRateBpm>
                    <Intensity>Active</Intensity>
                    <TriggerMethod>Manual</TriggerMethod>
                    <Track>
                      <Trackpoint>
                        <Time>2026-05-10T07:30:00.000Z</Time>
                        <Position>
                          <LatitudeDegrees>45.5035034</LatitudeDegrees>
                          <LongitudeDegrees>9.1794900</LongitudeDegrees>
                        </Position>
                        <AltitudeMeters>121.0</AltitudeMeters>
                        <DistanceMeters>0.00</DistanceMeters>
                        <HeartRateBpm>
                          <Value>140</Value>
                        </HeartRateBpm>
                      </Trackpoint>
                      <Trackpoint>
                        <Time>2026-05-10T07:30:01.000Z</Time>
                        <Position>
                          <LatitudeDegrees>-33.8567844</LatitudeDegrees>
                          <LongitudeDegrees>0.0000000</LongitudeDegrees>
                        </Position>
                        <DistanceMeters>3.26</DistanceMeters>
                      </Trackpoint>
                      <Trackpoint>
                        <Time>2026-05-10T07:30:02.500Z</Time>
                        <Position>
                          <LatitudeDegrees>45.5035000</LatitudeDegrees>
                          <LongitudeDegrees>-180.0000000</LongitudeDegrees>
                        </Position>
                        <AltitudeMeters>-2.3</AltitudeMeters>
                        <HeartRateBpm>
                          <Value>143</Value>
                        </HeartRateBpm>
                      </Trackpoint>
                    </Track>
                  </Lap>
                  <Notes>Park &amp; &lt;run&gt;</Notes>
                </Activity>
              </Activities>
            </TrainingCenterDatabase>

            """)
    }

    @Test func emptyRunIsStillAWholeDocument() throws {
        let run = ExportRun(name: "", startTime: time("2026-05-10T07:30:00.000Z"), distance: 0,
                            movingTime: 0, elapsedTime: 0)
        let gpx = try ChunkCollector.gpx(run, []).0.text
        #expect(!gpx.contains("<name>"))
        #expect(gpx.hasSuffix("    <trkseg>\n    </trkseg>\n  </trk>\n</gpx>\n"))
        let tcx = try ChunkCollector.tcx(run, []).0.text
        // One lap without a Track (the schema forbids an empty one), no Notes.
        #expect(tcx.occurrences(of: "<Lap ") == 1)
        #expect(!tcx.contains("<Track>"))
        #expect(!tcx.contains("<Notes>"))
        #expect(tcx.hasSuffix("<TriggerMethod>Manual</TriggerMethod>\n      </Lap>\n    </Activity>\n  </Activities>\n</TrainingCenterDatabase>\n"))
    }
}

extension ExportStatistics {
    init(written: Int, skipped: Int = 0, droppedHeartRates: Int = 0) {
        self.init()
        writtenPoints = written
        skippedPoints = skipped
        self.droppedHeartRates = droppedHeartRates
    }
}
