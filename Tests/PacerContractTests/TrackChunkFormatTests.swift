import PacerContract
import PacerCore
import Testing

/// The chunk format as both ends use it: what the device writes, the cloud reads back.
@Suite(.timeLimit(.minutes(10))) struct TrackChunkFormatTests {
    @Test("a line is the spec's example, byte for byte")
    func lineIsTheSpecExample() {
        let first = ChunkSample(timeMs: 1_778_398_200_000, lat: 45.5035034, lon: 9.17949, speedMps: 0, distanceM: 0, moving: false, heartRate: nil)
        let second = ChunkSample(timeMs: 1_778_398_201_000, lat: 45.5035134, lon: 9.1795, speedMps: 3.1, distanceM: 3.1, moving: true, heartRate: 142)
        #expect(TrackChunkFormat.line(first) == "1778398200000,45.5035034,9.1794900,0.00,0.0,0,")
        #expect(TrackChunkFormat.line(second) == "1778398201000,45.5035134,9.1795000,3.10,3.1,1,142")
    }

    @Test("what the device writes the cloud reads back: every sample, in order, to the printed precision")
    func deviceChunksReadBack() throws {
        let chunks = OpenAPIContractTests.chunks()
        #expect(chunks.count == 3)
        let samples = try chunks.flatMap { try TrackChunkFormat.decode(Array($0.utf8)) }
        #expect(samples.count == 25)
        #expect(samples.map(\.timeMs) == (0..<25).map { OpenAPIContractTests.t0.milliseconds + Int64($0) * 1000 })
        #expect(samples.allSatisfy { TrackChunkFormat.line($0) == TrackChunkFormat.line(ChunkSample(
            timeMs: $0.timeMs, lat: $0.lat, lon: $0.lon, speedMps: $0.speedMps, distanceM: $0.distanceM, moving: $0.moving, heartRate: $0.heartRate,
            altitudeM: $0.altitudeM)) })
        // Altitude where the device had one (two samples in three), to the tenth it writes; none elsewhere.
        #expect(samples.enumerated().allSatisfy { $0.element.altitudeM == ($0.offset % 3 == 0 ? nil : ((-20.5 + Double($0.offset) * 97.3) * 10).rounded() / 10) })
        // The reading at 10 s reaches samples 10...15 (5 s), not before it nor after.
        #expect(samples.map { $0.heartRate != nil } == (0..<25).map { (10...15).contains($0) })
        #expect(samples[3].lat == -33.86877 && samples[3].lon == -0.10003)
    }

    @Test("a line outside the ranges is refused, naming the field", arguments: [
        ("1778398200000,91.0,9.0,0.00,0.0,0,", "lat"),
        ("1778398200000,45.0,9.0,1000.01,0.0,0,", "speed_mps"),
        ("100,45.0,9.0,0.00,0.0,0,", "time_ms"),
        ("1778398200000,45.0,9.0,0.00,0.0,2,", "moving"),
        ("1778398200000,45.0,9.0,0.00,0.0,0,301", "hr"),
        ("1778398200000,45.0,9.0,0.00,0.0,0", "6 fields"),
    ])
    func badLinesAreRefused(line: String, field: String) {
        #expect {
            try TrackChunkFormat.decode(Array((line + "\n").utf8))
        } throws: { error in
            "\(error)".contains(field) && "\(error)".contains("track line 1")
        }
    }

    @Test("wire times: Z or an offset in, milliseconds out; printed in one format")
    func wireTimes() {
        #expect(WireTime.milliseconds("2026-05-10T07:30:00.000Z") == 1_778_398_200_000)
        #expect(WireTime.milliseconds("2026-05-10T09:30:00.5+02:00") == 1_778_398_200_500)
        #expect(WireTime.milliseconds("2026-05-10T07:30:00") == nil)
        #expect(WireTime.milliseconds("2026-05-10T07:30:00+0200") == nil)
        #expect(WireTime.text(milliseconds: 1_778_398_200_500) == "2026-05-10T07:30:00.500Z")
        #expect(WireTime.text(milliseconds: .max) == "9999-12-31T23:59:59.999Z")
        // The device's own parser stays UTC only.
        #expect(Timestamp(iso8601: "2026-05-10T09:30:00+02:00") == nil)
    }
}
