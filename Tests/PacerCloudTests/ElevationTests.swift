import CloudModel
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// Elevation (#33): a file's altitudes (GPX `<ele>`, TCX `AltitudeMeters`) are kept with the
/// track (the chunk line's optional eighth field), exported again, and the run page shows the
/// metres climbed and an elevation chart; a receiver's jitter on the flat climbs nothing.
@Suite("pacer-cloud: elevation gain and chart", .timeLimit(.minutes(10)))
struct ElevationTests {
    /// 600 s northwards at 3 m/s: 200 s flat at 100 m with ±1 m of jitter, 200 s up to 150 m,
    /// 200 s down to 100 m.
    static func altitude(_ i: Int) -> Double {
        switch i {
        case ..<200: 100 + (i % 2 == 0 ? 1 : -1)
        case ..<400: 100 + Double(i - 200) / 4
        default: 150 - Double(i - 400) / 4
        }
    }

    static func gpx() -> [UInt8] {
        var text = #"<?xml version="1.0"?><gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><name>Hill repeat</name><trkseg>"#
        for i in 0..<600 {
            let time = WireTime.text(milliseconds: Track.start + Int64(i) * 1_000)
            text += String(format: #"<trkpt lat="%.7f" lon="9.2"><ele>%.1f</ele><time>%@</time></trkpt>"#, 45.5 + Double(i) * 3 / 111_000, altitude(i), time)
        }
        return Array((text + "</trkseg></trk></gpx>").utf8)
    }

    static func tcx() -> [UInt8] {
        var text = #"<?xml version="1.0"?><TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"><Activities><Activity Sport="Running"><Id>"#
        text += WireTime.text(milliseconds: Track.start + 86_400_000) + "</Id><Lap><Track>"
        for i in 0..<600 {
            let time = WireTime.text(milliseconds: Track.start + 86_400_000 + Int64(i) * 1_000)
            text += String(format: "<Trackpoint><Time>%@</Time><Position><LatitudeDegrees>%.7f</LatitudeDegrees><LongitudeDegrees>9.3</LongitudeDegrees></Position><AltitudeMeters>%.1f</AltitudeMeters><DistanceMeters>%.1f</DistanceMeters></Trackpoint>",
                           time, 45.5 + Double(i) * 3 / 111_000, altitude(i), Double(i) * 3)
        }
        return Array((text + "</Track></Lap></Activity></Activities></TrainingCenterDatabase>").utf8)
    }

    @Test("imported altitudes: metres climbed on the page (feet for miles), an elevation chart, <ele> in the export; none without altitude",
          arguments: Backend.allCases)
    func imported(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let (ann, csrf) = try await FileTests.signedIn(cloud, "ann@example.org")
            for (name, bytes) in [("hill.gpx", Self.gpx()), ("hill.tcx", Self.tcx())] {
                let response = try await FileTests.upload(cloud, ann, csrf: csrf, fileName: name, bytes)
                #expect(response.status == .created, "\(name): \(response.text.prefix(400))")
            }
            let runs = try await ImportSetTests.imported(cloud, email: "ann@example.org")
            #expect(runs.count == 2)
            for run in runs {
                let page = try await ann.get("/runs/\(run.run.summary.runID)").text
                // 99 m (the jitter's low) to 150 m: 51 m, less at most one threshold's remainder; the flat's ±1 m adds nothing.
                let climbed = try #require(page.firstMatch(of: /([0-9]+) m climbed/).flatMap { Int($0.1) }, "\(page.prefix(800))")
                #expect((48...51).contains(climbed), "\(climbed) m climbed")
                #expect(page.contains(#"id="elevation-chart""#))
                let data = try RunnerPageTests.dataBlock(page)
                let elevation = (data["elevation"] as? [Any])?.compactMap { $0 as? Double } ?? []
                #expect(data["heightUnit"] as? String == "m")
                #expect(elevation.count > 100 && (elevation.max() ?? 0) > 145 && (elevation.min() ?? 0) < 102, "\(elevation.prefix(10))")
                let export = try await ann.get("/runs/\(run.run.summary.runID)/export.gpx").text
                #expect(export.contains("<ele>150.0</ele>") || export.contains("<ele>150</ele>"), "\(export.prefix(600))")
            }

            // The same run for a runner who reads miles: feet.
            let account = try #require(try await cloud.store.accounts.account(email: "ann@example.org")).account
            try await cloud.store.accounts.setAccountSettings(id: account.id, timezone: account.timezone, maxHeartRate: nil, units: .mi)
            let page = try await ann.get("/runs/\(runs[0].run.summary.runID)").text
            let feet = try #require(page.firstMatch(of: /([0-9]+) ft climbed/).flatMap { Int($0.1) }, "\(page.prefix(800))")
            #expect((157...168).contains(feet), "\(feet) ft")
            #expect(try RunnerPageTests.dataBlock(page)["heightUnit"] as? String == "ft")
        }
    }

    @Test("the chunk line's altitude: written with one decimal when known, absent when not; read back; out of range refused naming alt_m")
    func chunkLine() throws {
        let sample = ChunkSample(timeMs: Track.start, lat: 45.5, lon: 9.2, speedMps: 3, distanceM: 10, moving: true, heartRate: 140, altitudeM: 121.54)
        let line = TrackChunkFormat.line(sample)
        #expect(line.hasSuffix(",140,121.5"))
        #expect(try TrackChunkFormat.decode(Array((line + "\n").utf8)).first?.altitudeM == 121.5)
        var without = sample
        without.altitudeM = nil
        #expect(TrackChunkFormat.line(without).hasSuffix(",140"), "seven fields as before")
        #expect(try TrackChunkFormat.decode(Array((TrackChunkFormat.line(without) + ",\n").utf8)).first?.altitudeM == nil)
        for bad in ["12000", "-1500", "nan", "high"] {
            #expect(throws: TrackChunkFormat.Failure.self) { try TrackChunkFormat.decode(Array("\(TrackChunkFormat.line(without)),\(bad)\n".utf8)) }
        }
        let error = #expect(throws: TrackChunkFormat.Failure.self) { try TrackChunkFormat.decode(Array("\(TrackChunkFormat.line(without)),high\n".utf8)) }
        #expect(error?.description.contains("alt_m") == true)
        #expect(throws: TrackChunkFormat.Failure.self) { try TrackChunkFormat.decode(Array("\(TrackChunkFormat.line(sample)),1\n".utf8)) }
    }

    @Test("climbing: the hysteresis counts rises past 3 m from the lowest point, never the jitter, nil without altitude")
    func climb() {
        func samples(_ altitudes: [Double?]) -> [ChunkSample] {
            altitudes.enumerated().map { ChunkSample(timeMs: Int64($0.offset) * 1_000, lat: 45, lon: 9, speedMps: 3, distanceM: Double($0.offset) * 3,
                                                     moving: true, heartRate: nil, altitudeM: $0.element) }
        }
        #expect(RunView.climb(samples([nil, nil])) == nil)
        #expect(RunView.climb(samples((0..<100).map { 100 + ($0 % 2 == 0 ? 1.4 : -1.4) })) == 0)
        let climbed = RunView.climb(samples([100, 110, 105, 115, nil, 100, 120]))
        #expect(climbed == 40, "10 + 10 + 20: \(String(describing: climbed))")
        #expect(RunView.climb(samples([100, 102, 104, 106])) == 6, "a steady climb in small steps counts whole")
    }
}
