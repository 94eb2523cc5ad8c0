import Foundation
import PacerCore
import Testing

/// The device's named zones (TZif files of Debian's tzdata, read without Foundation) against
/// Foundation's TimeZone (ICU's data) at instants around every change of 2020 to 2035.
@Suite(.timeLimit(.minutes(10))) struct ZoneOffsetsTests {
    static func zone(_ name: String) throws -> ZoneOffsets {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/" + name)))
        return try #require(ZoneOffsets(tzif: bytes), "\(name) did not parse")
    }

    @Test("offsets agree with Foundation's across daylight-saving changes", arguments: [
        "Europe/Rome", "America/Los_Angeles", "Pacific/Auckland", "Asia/Kolkata", "Australia/Lord_Howe", "America/St_Johns", "UTC",
    ])
    func agreesWithFoundation(name: String) throws {
        let zone = try Self.zone(name)
        let reference = try #require(TimeZone(identifier: name))
        var mismatches: [String] = []
        // Every 25 hours from 2020 to 2035 (so through every hour of the day), and a second
        // either side; and a second either side of each of the zone's own changes.
        var instants: [Int64] = Array(stride(from: 1_577_836_800, to: 2_051_222_400, by: 25 * 3600))
        var previous = zone.secondsFromUTC(atEpochSeconds: 1_577_836_800)
        for hour in stride(from: Int64(1_577_836_800), to: 2_051_222_400, by: 3600) where zone.secondsFromUTC(atEpochSeconds: hour) != previous {
            previous = zone.secondsFromUTC(atEpochSeconds: hour)
            instants += (hour - 3600...hour).filter { $0 % 60 == 0 }
        }
        for instant in instants {
            for t in [instant - 1, instant, instant + 1] {
                let expected = reference.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t)))
                if zone.secondsFromUTC(atEpochSeconds: t) != expected { mismatches.append("\(t): \(zone.secondsFromUTC(atEpochSeconds: t)) vs \(expected)") }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test("what is not a TZif file is refused")
    func refusals() {
        #expect(ZoneOffsets(tzif: []) == nil)
        #expect(ZoneOffsets(tzif: Array("TZif2 but nothing else".utf8)) == nil)
        #expect(ZoneOffsets(tzif: Array(repeating: 0, count: 200)) == nil)
    }

    @Test("a truncated file is refused, not read past its end")
    func truncated() throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Europe/Rome")))
        for length in [44, 100, 1000] { #expect(ZoneOffsets(tzif: Array(bytes.prefix(length))) == nil, "\(length) bytes") }
    }
}
