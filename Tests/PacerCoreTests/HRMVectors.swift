import Foundation

/// ../shared/data/hrm-vectors.json beside the repository: BLE 0x2A37 and 0x2A19 values from
/// open-source projects' tests, each with the decoding the SIG layout gives. Read at test time;
/// the tests that need it are skipped when the file is not there.
struct HRMVector: Decodable, Sendable, CustomStringConvertible {
    var id: String
    var characteristic: String
    var hex: String
    var spec_decoding: SpecDecoding

    struct SpecDecoding: Decodable, Sendable {
        var valid: Bool
        var flags: String?
        var hr_format: String?
        var heart_rate_bpm: Int?
        var sensor_contact: String?
        var energy_expended_kj: Int?
        var rr_intervals_raw_1_1024s: [UInt16]?
        var rr_intervals_ms: [Double]?
        var trailing_bytes: Int?
        var reserved_flag_bits_set: Bool?
        var battery_percent: Int?
        var battery_percent_raw: Int?
        var reason: String?
    }

    var isBattery: Bool { characteristic == "0x2A19" }

    var bytes: [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    var description: String { id }
}

enum HRMVectors {
    static let path: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/PacerCoreTests/HRMVectors.swift
        return parts.joined(separator: "/") + "/../shared/data/hrm-vectors.json"
    }()

    static var isAvailable: Bool { FileManager.default.fileExists(atPath: path) }

    static func load() throws -> [HRMVector] {
        struct File: Decodable { var count: Int; var vectors: [HRMVector] }
        let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        precondition(file.vectors.count == file.count, "hrm-vectors.json: count does not match its vectors")
        return file.vectors
    }
}
