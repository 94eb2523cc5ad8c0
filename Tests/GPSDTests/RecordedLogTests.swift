import GPSD
import PacerCore
import Testing

/// Every recorded gpsd 3.22 log, decoded line by line and checked against its own text.
@Suite(.enabled(if: SharedData.isAvailable, SharedData.unavailable), .timeLimit(.minutes(10)))
struct RecordedLogTests {
    /// A parameterised test over an empty list would pass without testing anything.
    @Test func theLogsArePresent() {
        #expect(!SharedData.files(in: "gpsd-logs/gpspipe-3.22", suffix: ".gpspipe.json").isEmpty)
        #expect(!SharedData.files(in: "sim", suffix: ".gpsd.jsonl").isEmpty)
    }

    @Test(arguments: SharedData.gpsdLogs)
    func everyLineDecodesAsItsTextSays(_ file: String) throws {
        let lines = try SharedData.lines(file)
        let decoder = GPSDecoder()
        var decodedClasses: [String: Int] = [:]
        var notJSON = 0
        var problems: [String] = []
        for (index, line) in lines.enumerated() {
            let place = "\(file):\(index + 1)"
            let message: GPSMessage
            do throws(GPSDecodeError) {
                message = try decoder.decode(line)
            } catch .notJSON {
                notJSON += 1
                continue
            } catch .malformed(let reason) {
                problems.append("\(place): malformed: \(reason)")
                continue
            }
            let className: String
            switch message {
            case .fix(let fix):
                className = "TPV"
                problems += Self.differences(fix, line).map { "\(place): \($0)" }
            case .sky(let sky):
                className = "SKY"
                problems += Self.differences(sky, line).map { "\(place): \($0)" }
            case .version(let release):
                className = "VERSION"
                if release != RawJSON.value("release", in: line).map({ String($0.dropFirst().dropLast()) }) {
                    problems.append("\(place): release \(release)")
                }
            case .gpsdError:
                className = "ERROR"
            case .other(let name):
                className = name
            }
            if className != RawJSON.className(of: line) {
                problems.append("\(place): decoded as \(className)")
            }
            decodedClasses[className, default: 0] += 1
        }
        #expect(problems.count == 0, "first: \(problems.prefix(5))")
        for name in ["TPV", "SKY", "VERSION", "WATCH"] {
            #expect(decodedClasses[name, default: 0] == RawJSON.lines(lines, ofClass: name), "\(name)")
        }
        #expect(decodedClasses["TPV", default: 0] > 0)
        let expectedNotJSON = lines.filter { !$0.drop { $0.isWhitespace }.hasPrefix("{") }.count
        #expect(notJSON == expectedNotJSON)
    }

    @Test func noFixReportsCarryNoPosition() throws {
        var seen = 0
        try forEachTPV { fix, line, _ in
            guard line.contains(#""mode":1"#) else { return }
            seen += 1
            #expect(fix.mode == .noFix)
            #expect(fix.latitude == nil && fix.longitude == nil, "\(line)")
        }
        #expect(seen > 0)
    }

    /// gpsd 3.22 sends mode 3 before it has a position or a time (garmin15x, iTrek, mt3339, …).
    @Test func earlyModeThreeWithoutPositionOrTime() throws {
        var seen = 0
        try forEachTPV { fix, line, _ in
            guard line.contains(#""mode":3"#), !line.contains(#""lat""#), !line.contains(#""time""#)
            else { return }
            seen += 1
            #expect(fix.mode == .threeD)
            #expect(fix.latitude == nil && fix.longitude == nil && fix.time == nil, "\(line)")
        }
        #expect(seen > 0)
    }

    @Test func missingStatusKeyIsUnknownAndPresentOnesAreRead() throws {
        var missing = 0
        var simulated = 0
        try forEachTPV { fix, line, _ in
            if !line.contains(#""status""#) {
                missing += 1
                #expect(fix.status == .unknown)
            } else if line.contains(#""status":8"#) {
                simulated += 1  // garmin-geko201 in demo mode
                #expect(fix.status == .simulated)
            }
        }
        #expect(missing > 0)
        #expect(simulated > 0)
    }

    /// The receiver's own (Doppler) speed comes with a track; gpsd's derived speed comes without.
    @Test func trackTellsDopplerSpeedFromDerivedSpeed() throws {
        var doppler = (speed: 0, track: 0)
        var derived = (speed: 0, track: 0)
        try forEachTPV(in: ["sim/city-10k-1.gpsd.jsonl"]) { fix, _, _ in
            if fix.speed != nil { doppler.speed += 1 }
            if fix.speed != nil && fix.track != nil { doppler.track += 1 }
        }
        try forEachTPV(in: ["sim/city-10k-1-nosog.gpsd.jsonl"]) { fix, _, _ in
            if fix.speed != nil { derived.speed += 1 }
            if fix.track != nil { derived.track += 1 }
        }
        #expect(doppler.speed > 1000)
        #expect(doppler.track == doppler.speed)
        #expect(derived.speed > 1000)
        #expect(derived.track == 0)
    }

    @Test func firstFixAfterAnOutageHasAHugeErrorEstimate() throws {
        var outageEnds = 0
        var rawCount = 0
        try forEachTPV(in: SharedData.files(in: "sim", suffix: ".gpsd.jsonl")) { fix, line, previous in
            if let eph = RawJSON.number("eph", in: line), eph > 1000 { rawCount += 1 }
            guard let eph = fix.eph, eph > 1000 else { return }
            outageEnds += 1
            #expect((1800...2000).contains(eph))
            #expect(previous?.mode == .noFix, "\(line)")
            #expect(fix.mode == .threeD && fix.latitude != nil)
        }
        #expect(outageEnds > 0)
        #expect(outageEnds == rawCount)
    }

    /// gpsd emits one TPV per sentence that updates the fix: about 17 per epoch here.
    @Test func severalReportsPerEpochShareTheirTime() throws {
        var reports = 0
        var epochs = Set<Timestamp>()
        var rawTimes = Set<String>()
        try forEachTPV(in: ["gpsd-logs/gpspipe-3.22/bundg_zeus_9.log.gpspipe.json"]) { fix, line, _ in
            reports += 1
            if let time = fix.time { epochs.insert(time) }
            if let raw = RawJSON.value("time", in: line) { rawTimes.insert(String(raw)) }
        }
        #expect(epochs.count == rawTimes.count)
        #expect(reports > 5 * epochs.count)
    }

    /// gpsd 3.22 reports a closed device as "activated":0, which its own libgps rejects.
    @Test func closedDeviceIsStillADeviceReport() throws {
        var seen = 0
        let decoder = GPSDecoder()
        for file in SharedData.gpsdLogs {
            for line in try SharedData.lines(file) where line.contains(#""activated":0"#) {
                seen += 1
                #expect(try decoder.decode(line) == .other(className: "DEVICE"))
            }
        }
        #expect(seen > 0)
    }

    // MARK: - Helpers

    /// Calls `body` with each TPV's fix, its line and the previous TPV's fix in the same file.
    private func forEachTPV(
        in files: [String] = SharedData.gpsdLogs,
        _ body: (GPSFix, String, GPSFix?) throws -> Void
    ) throws {
        for file in files {
            let decoder = GPSDecoder()
            var previous: GPSFix?
            for line in try SharedData.lines(file) where line.contains(#""class":"TPV""#) {
                guard case .fix(let fix) = try decoder.decode(line) else {
                    Issue.record("\(file): TPV not decoded as a fix: \(line)")
                    continue
                }
                try body(fix, line, previous)
                previous = fix
            }
        }
    }

    private static func differences(_ fix: GPSFix, _ line: String) -> [String] {
        var out: [String] = []
        let mode = RawJSON.number("mode", in: line).map { Int($0) } ?? 0
        let status = RawJSON.number("status", in: line).map { Int($0) } ?? 0
        if fix.mode.rawValue != mode { out.append("mode \(fix.mode)") }
        if fix.status.rawValue != status { out.append("status \(fix.status)") }
        if fix.time != RawJSON.time(in: line) { out.append("time \(String(describing: fix.time))") }
        let fields: [(String, Double?)] = [
            ("lat", fix.latitude), ("lon", fix.longitude),
            ("speed", fix.speed), ("track", fix.track), ("eph", fix.eph), ("eps", fix.eps),
        ]
        for (key, value) in fields where !same(value, RawJSON.number(key, in: line)) {
            out.append("\(key) \(String(describing: value))")
        }
        // The altitude above mean sea level, the ellipsoid's where the report has none.
        if !same(fix.altitude, RawJSON.number("altMSL", in: line) ?? RawJSON.number("altHAE", in: line)) {
            out.append("altitude \(String(describing: fix.altitude))")
        }
        return out
    }

    private static func differences(_ sky: SkyReport, _ line: String) -> [String] {
        var out: [String] = []
        if !same(sky.hdop, RawJSON.number("hdop", in: line)) { out.append("hdop") }
        if !same(sky.pdop, RawJSON.number("pdop", in: line)) { out.append("pdop") }
        if sky.time != RawJSON.time(in: line) { out.append("time") }
        let used = line.components(separatedBy: #""used":true"#).count - 1
        let seen = line.components(separatedBy: #""PRN":"#).count - 1
        if sky.satellitesUsed != used || sky.satellitesSeen != seen {
            out.append("satellites \(sky.satellitesUsed)/\(sky.satellitesSeen), text \(used)/\(seen)")
        }
        return out
    }

    /// Equal, or both absent; libgps' number parser may differ from Swift's in the last bit.
    private static func same(_ a: Double?, _ b: Double?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let x?, let y?): abs(x - y) <= 1e-12 * max(1, abs(y))
        default: false
        }
    }
}
