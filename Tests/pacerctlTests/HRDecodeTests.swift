import Foundation
import PacerTestSupport
import Testing

/// `pacerctl hr decode` as a person runs it: the built binary on values copied from btmon or
/// bluetoothctl, and on every vector of ../shared/data/hrm-vectors.json.
@Suite(.timeLimit(.minutes(10))) struct HRDecodeTests {
    static let vectorsPath = PacerCtlTests.sharedData + "/hrm-vectors.json"
    static let hasVectors = FileManager.default.fileExists(atPath: vectorsPath)

    /// PacerCtlTests' runner (off the cooperative pool), taking its arguments as written here.
    func pacerctl(_ arguments: String...) async throws -> PacerCtlTests.Result {
        try await offPool { try PacerCtlTests.runBlocking(arguments) }
    }

    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    /// Our JSON has exactly the vector's `spec_decoding` fields, with the same values (RR
    /// milliseconds to the file's 4 decimals; ours are exact).
    @Test(.enabled(if: hasVectors)) func everyVectorMatchesItsSpecDecodingFieldByField() async throws {
        let file = try object(String(contentsOfFile: Self.vectorsPath, encoding: .utf8))
        let vectors = try #require(file["vectors"] as? [[String: Any]])
        #expect(vectors.count == 17)
        for vector in vectors {
            let id = try #require(vector["id"] as? String)
            let hex = try #require(vector["hex"] as? String)
            let expected = try #require(vector["spec_decoding"] as? [String: Any])
            let battery = vector["characteristic"] as? String == "0x2A19"
            let r = battery ? try await pacerctl("hr", "decode", hex, "--battery", "--json") : try await pacerctl("hr", "decode", hex, "--json")
            #expect(r.status == 0, "\(id): \(r.stderr)")
            let got = try object(r.stdout)
            #expect(Set(got.keys) == Set(expected.keys), "\(id)")
            for (key, want) in expected {
                let have = got[key]
                switch key {
                case "valid", "reserved_flag_bits_set":
                    #expect(have as? Bool == want as? Bool, "\(id).\(key)")
                case "flags", "hr_format", "sensor_contact":
                    #expect(have as? String == want as? String, "\(id).\(key)")
                case "reason":
                    let text = try #require(have as? String, "\(id).reason")
                    #expect(text.contains(try #require(want as? String)), "\(id).reason: \(text)")
                case "heart_rate_bpm", "trailing_bytes", "battery_percent", "battery_percent_raw":
                    #expect(have as? Int == want as? Int, "\(id).\(key)")
                case "energy_expended_kj":
                    if want is NSNull { #expect(have is NSNull, "\(id).\(key) should be null") } else { #expect(have as? Int == want as? Int, "\(id).\(key)") }
                case "rr_intervals_raw_1_1024s":
                    #expect(have as? [Int] == want as? [Int], "\(id).\(key)")
                case "rr_intervals_ms":
                    let ours = try #require(have as? [Double], "\(id).\(key)")
                    let theirs = try #require(want as? [Double])
                    #expect(ours.count == theirs.count, "\(id).\(key)")
                    for (a, b) in zip(ours, theirs) { #expect(abs(a - b) <= 0.00005 + 1e-9, "\(id).\(key): \(a) vs \(b)") }
                    let raw = try #require(got["rr_intervals_raw_1_1024s"] as? [Int])
                    #expect(ours == raw.map { Double($0) * 1000 / 1024 }, "\(id): exact milliseconds")
                default:
                    Issue.record("\(id): spec_decoding field \(key) not checked")
                }
            }
        }
    }

    @Test func acceptsHexAsBtmonAndBluetoothctlShowIt() async throws {
        let expected = #"{"valid":true,"flags":"0x16","hr_format":"uint8","heart_rate_bpm":72,"sensor_contact":"detected","energy_expended_kj":null,"rr_intervals_raw_1_1024s":[340,748],"rr_intervals_ms":[332.03125,730.46875],"trailing_bytes":0,"reserved_flag_bits_set":false}"#
        for form in ["16 48 54 01 EC 02", "16485401EC02", "16485401ec02", "0x16 0x48 0x54 0x01 0xec 0x02", "16:48:54:01:EC:02"] {
            let r = try await pacerctl("hr", "decode", form, "--json")
            #expect(r.status == 0, "\(form)")
            #expect(r.stdout == expected + "\n", "\(form)")
        }
        // Unquoted, as several arguments.
        let split = try await pacerctl("hr", "decode", "16", "48", "54", "01", "EC", "02", "--json")
        #expect(split.stdout == expected + "\n")
    }

    @Test func readableText() async throws {
        #expect(try await pacerctl("hr", "decode", "16 48 54 01 EC 02").stdout == "72 bpm, contact detected, RR 332.0 ms 730.5 ms\n")
        #expect(try await pacerctl("hr", "decode", "1E5532002100").stdout == "85 bpm, contact detected, energy 50 kJ, RR 32.2 ms\n")
        #expect(try await pacerctl("hr", "decode", "0250").stdout == "80 bpm, contact not supported\n")
        #expect(try await pacerctl("hr", "decode", "04FF").stdout == "255 bpm, contact not detected (not a heart reading)\n")
        #expect(try await pacerctl("hr", "decode", "010101").stdout == "257 bpm, contact not supported\n")
        #expect(try await pacerctl("hr", "decode", "F6485401EC0277").stdout
            == "72 bpm, contact detected, RR 332.0 ms 730.5 ms, 1 trailing byte ignored, reserved flag bits 0xE0 ignored\n")
        #expect(try await pacerctl("hr", "decode", "2C", "--battery").stdout == "battery 44 %\n")
    }

    /// A value that is not a valid measurement is an answer, not an error: status 0.
    @Test func invalidValuesAreReportedWithStatusZero() async throws {
        let missingRR = try await pacerctl("hr", "decode", "17 01 01", "--json")
        #expect(missingRR.status == 0)
        #expect(missingRR.stdout == #"{"valid":false,"flags":"0x17","reason":"RR-interval flag set but no RR-interval present"}"# + "\n")

        let empty = try await pacerctl("hr", "decode", "", "--json")
        #expect(empty.status == 0)
        #expect(try object(empty.stdout)["valid"] as? Bool == false)
        #expect(try object(empty.stdout)["flags"] == nil)

        let short = try await pacerctl("hr", "decode", "01 48")
        #expect(short.status == 0)
        #expect(short.stdout == "invalid: too short for its heart-rate field: 2 bytes, the flags need 3\n")

        let reserved = try await pacerctl("hr", "decode", "FF", "--battery", "--json")
        #expect(reserved.status == 0)
        #expect(reserved.stdout == #"{"valid":false,"battery_percent_raw":255,"reason":"255 is not a percentage: 101-255 reserved for future use"}"# + "\n")

        let long = try await pacerctl("hr", "decode", "2C 00", "--battery", "--json")
        #expect(long.status == 0)
        #expect(try object(long.stdout)["battery_percent_raw"] == nil)
    }

    @Test func badHexIsAUsageError() async throws {
        for (text, message) in [("16 4G", #""4G" is not hex"#), ("123", "odd number of hex digits"), ("0x", "no digits after 0x"),
                                ("heart", #""heart" is not hex"#)] {
            let r = try await pacerctl("hr", "decode", text, "--json")
            #expect(r.status == 64, "\(text)")
            #expect(r.stdout.isEmpty, "\(text)")
            #expect(r.stderr.contains(message), "\(text): \(r.stderr)")
        }
        let missing = try await pacerctl("hr", "decode")
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("<HEX>"))
        let unknown = try await pacerctl("hr", "decode", "0650", "--batery")
        #expect(unknown.status == 64)
    }
}
