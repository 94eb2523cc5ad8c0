import Foundation
import PacerCore
import Testing
@testable import Export

/// The FIT writer: the synthetic 3 h 40 min run read back by two independent decoders from PyPI
/// (garmin-fit-sdk and fitdecode with its CRC check, through tools/verify-fit), and the protocol's
/// fixed parts checked byte by byte.
@Suite(.serialized, .timeLimit(.minutes(10))) struct FITWriterTests {
    static let verifier = IndependentParserTests.repositoryRoot + "/tools/verify-fit"

    static func write(_ synthetic: SyntheticRun) throws -> (bytes: [UInt8], statistics: ExportStatistics) {
        var file: [UInt8] = []
        var calls = 0
        var writer = FITWriter { bytes in
            file += bytes
            calls += 1
        }
        try writer.write(synthetic.run, points: synthetic.points)
        #expect(calls == 1, "the whole file goes to the sink at end()")
        return (file, writer.statistics)
    }

    /// Writes the file and its expected samples into a fresh directory.
    static func files(_ synthetic: SyntheticRun) throws -> (directory: String, fit: String, expected: String) {
        let directory = NSTemporaryDirectory() + "pacer-fit-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let (bytes, _) = try write(synthetic)
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/run.fit"))
        try synthetic.expectedJSONLines.write(toFile: directory + "/expected.jsonl", atomically: true, encoding: .utf8)
        return (directory, directory + "/run.fit", directory + "/expected.jsonl")
    }

    static func verify(_ files: (directory: String, fit: String, expected: String), distance: Double, laps: Int?) async throws
        -> IndependentParserTests.Result {
        var arguments = [verifier, files.fit, files.expected, "--distance", String(distance)]
        if let laps { arguments += ["--laps", String(laps)] }
        return try await IndependentParserTests.python(arguments)
    }

    @Test func twoIndependentDecodersReadBackEverySample() async throws {
        let synthetic = IndependentParserTests.synthetic
        let (_, statistics) = try Self.write(synthetic)
        #expect(statistics == ExportStatistics(written: synthetic.expected.count, skipped: synthetic.invalidCount))
        let files = try Self.files(synthetic)
        let result = try await Self.verify(files, distance: synthetic.run.distance, laps: synthetic.run.laps.count)
        #expect(result.status == 0, "verify-fit failed (files kept in \(files.directory); tools/setup installs the decoders):\n\(result.errors)")
        #expect(result.output.contains("13200 records match"))
        if result.status == 0 { try? FileManager.default.removeItem(atPath: files.directory) }
    }

    /// The verifier catches what it is there for: a changed byte (the CRC), a session distance
    /// off by more than 0.5 %, a missing record, a wrong heart rate.
    @Test func verifierRejectsMismatches() async throws {
        var small = SyntheticRun(seconds: 300, lapMetres: 200)
        let files = try Self.files(small)
        defer { try? FileManager.default.removeItem(atPath: files.directory) }
        let good = try await Self.verify(files, distance: small.run.distance, laps: small.run.laps.count)
        #expect(good.status == 0, "\(good.errors)")

        let far = try await Self.verify(files, distance: small.run.distance * 1.006, laps: nil)
        #expect(far.status == 1 && far.errors.contains("total_distance"), "\(far.errors)")

        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: files.fit)))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: files.fit))
        let corrupt = try await Self.verify(files, distance: small.run.distance, laps: nil)
        #expect(corrupt.status == 1 && corrupt.errors.contains("CRC"), "\(corrupt.errors)")

        // The file is written from the points, the expectation from `expected`: mutate only that.
        let original = small.expected
        for (message, mutate) in [("expected 299", { (points: inout [ExportPoint]) in points.removeLast() }),
                                  ("heart rate", { (points: inout [ExportPoint]) in points[10].heartRate = 40 })] {
            small.expected = original
            mutate(&small.expected)
            let mutated = try Self.files(small)
            let result = try await Self.verify(mutated, distance: small.run.distance, laps: nil)
            try? FileManager.default.removeItem(atPath: mutated.directory)
            #expect(result.status == 1 && result.errors.contains(message), "\(message): \(result.errors)")
        }
    }

    @Test func headerAndCRCFollowTheProtocol() throws {
        // CRC-16/ARC, which the FIT SDK's nibble-table CRC computes: the standard check value.
        #expect(FITProtocol.crc(Array("123456789".utf8)) == 0xBB3D)
        let (bytes, _) = try Self.write(SyntheticRun(seconds: 60, lapMetres: 100))
        #expect(bytes[0] == 14 && bytes[1] == 0x20)
        #expect(Array(bytes[8..<12]) == Array(".FIT".utf8))
        let dataSize = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        #expect(dataSize == bytes.count - 16)
        #expect(FITProtocol.crc(bytes[0..<12]) == UInt16(bytes[12]) | UInt16(bytes[13]) << 8)
        // A file's CRC over everything including its own CRC is 0.
        #expect(FITProtocol.crc(bytes) == 0)
    }

    @Test func semicirclesRoundTripAndWrapAtTheAntimeridian() {
        #expect(FITProtocol.semicircles(180) == Int32.min)
        #expect(FITProtocol.semicircles(-180) == Int32.min)
        #expect(FITProtocol.semicircles(90) == 1 << 30)
        for degrees in [45.503_503_4, -33.868_82, 0, 9.179_49] {
            #expect(abs(FITProtocol.degrees(FITProtocol.semicircles(degrees)) - degrees) < 1e-7)
        }
    }

    @Test func badRunsAreRefusedAsTCXRefusesThem() {
        var writer = FITWriter { _ in }
        let run = ExportRun(name: "x", startTime: Timestamp(milliseconds: 0), distance: .nan, movingTime: 0, elapsedTime: 0)
        #expect(throws: ExportError.self) { try writer.begin(run) }
    }
}
