import Foundation
import PacerCore
import Testing
@testable import PacerReplay

@Suite(.timeLimit(.minutes(10))) struct HeartRateLineTests {
    static let start = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!

    /// A TPV one second apart from 07:30:00, running north at 3 m/s.
    static func tpvLine(_ second: Int) -> String {
        let time = start.adding(seconds: Double(second)).iso8601
        return #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"\#(time)","lat":\#(45.4775 + Double(second) * 0.000027),"lon":9.2241,"speed":3.0,"track":0.0,"eph":15.2}"#
    }

    static func hrmLine(_ hex: String, at seconds: Double) -> String {
        #"{"class":"HRM","time":"\#(start.adding(seconds: seconds).iso8601)","hex":"\#(hex)"}"#
    }

    static func load(_ lines: [String], heartRateLog: String? = nil, keepRawLines: Bool = false) throws -> ReplayInputs {
        let path = SharedData.temporaryFile(lines.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let hrPath = heartRateLog.map { SharedData.temporaryFile($0) }
        defer { if let hrPath { try? FileManager.default.removeItem(atPath: hrPath) } }
        return try ReplayLoader.load(gpsPath: path, heartRatePath: hrPath, keepRawLines: keepRawLines)
    }

    @Test func writesTheDocumentedLineAndParsesItBack() throws {
        let time = Timestamp(iso8601: "2026-05-10T07:41:12.250Z")!
        let line = HeartRateLine.line([0x16, 0x48, 0x54, 0x01, 0xEC, 0x02], time: time)
        #expect(line == #"{"class":"HRM","time":"2026-05-10T07:41:12.250Z","hex":"16485401EC02"}"#)
        let parsed = try #require(HeartRateLine.parse(Array(line.utf8)))
        #expect(parsed.time == time)
        #expect(parsed.bytes == [0x16, 0x48, 0x54, 0x01, 0xEC, 0x02])
        #expect(HeartRateLine.parse(line)?.bytes == parsed.bytes)
        #expect(HeartRateLine.parse(line[...])?.time == time)
        // An empty value is a line like any other (its bytes are what is malformed).
        #expect(HeartRateLine.parse(HeartRateLine.line([], time: time))?.bytes == [])
        #expect(HeartRateLine.line([0xAB, 0x0C], time: time).hasSuffix(#""hex":"AB0C"}"#))
    }

    @Test func readsLowerCaseAndReorderedKeys() {
        let line = #"{"hex":"0e4b8000","time":"2026-05-10T07:41:12.250Z","class":"HRM"}"#
        #expect(HeartRateLine.parse(line)?.bytes == [0x0E, 0x4B, 0x80, 0x00])
    }

    @Test func rejectsWhatIsNotAnHRMLine() {
        for line in [
            #"{"class":"HRM","time":"2026-05-10T07:41:12.250Z","hex":"16ZZ"}"#,  // not hex
            #"{"class":"HRM","time":"2026-05-10T07:41:12.250Z","hex":"164"}"#,  // half a byte
            #"{"class":"HRM","time":"yesterday","hex":"0650"}"#,
            #"{"class":"HRM","time":"2026-05-10T07:41:12.250+02:00","hex":"0650"}"#,
            #"{"class":"HRM","hex":"0650"}"#,
            #"{"class":"HRM","time":"2026-05-10T07:41:12.250Z"}"#,
            #"{"class":"HRM","time":"2026-05-10T07:41:12.250Z","hex":6}"#,
            #"{"class":"PACER","time":"2026-05-10T07:41:12.250Z","hex":"0650"}"#,
            #"{"class":"HRM","time":"2026-05-10T07:41:12.250Z","hex":"0650""#,
            "",
        ] {
            #expect(HeartRateLine.parse(line) == nil, "\(line)")
        }
    }

    @Test func hexTextInTheFormsToolsPrint() {
        let expected: [UInt8] = [0x16, 0x48, 0x54, 0x01, 0xEC, 0x02]
        for text in ["16 48 54 01 EC 02", "16485401EC02", "16485401ec02", "0x16 0x48 0x54 0x01 0xEC 0x02", "16:48:54:01:ec:02",
                     "16-48-54-01-EC-02", " 16 48\t54 01\nEC 02 ", "0X1648 5401EC02", "16,48,54,01,EC,02"] {
            #expect(HexBytes.parse(text) == .success(expected), "\(text)")
        }
        #expect(HexBytes.parse("") == .success([]))
        #expect(HexBytes.parse("   ") == .success([]))
        #expect(HexBytes.parse("16 4") == .failure(.oddDigits("4")))
        #expect(HexBytes.parse("16 4G") == .failure(.notHex("4G", "G")))
        #expect(HexBytes.parse("0x") == .failure(.emptyGroup("0x")))
        #expect(HexBytes.parse("１６") == .failure(.notHex("１６", "１")))  // full-width digits are not hex
        #expect(HexBytesError.notHex("4G", "G").description == #""4G" is not hex ("G" is not a hex digit)"#)
        #expect(HexBytes.string([0x00, 0x0F, 0xA0, 0xFF]) == "000FA0FF")
    }

    /// HRM lines interleaved with fixes give the run's heart rate; a no-contact notification is
    /// kept as a sample but not counted, and bad lines are counted, not fatal.
    @Test func replayOfARawLogWithHRMLines() throws {
        var lines: [String] = []
        let notifications: [(Double, String)] = [
            (0.5, "16640400"),  // 100 bpm, contact, RR 4
            (1.5, "066E"),  // 110
            (2.5, "04C8"),  // 200 bpm but no skin contact: not a heart reading
            (3.5, "170101"),  // RR flag without RR: malformed packet
            (4.5, "0178 00"),  // 120 as uint16, contact not supported
            (5.5, "06ZZ"),  // not hex: malformed line
            (6.5, "1E8C32005401"),  // 140, energy, RR
            (7.5, ""),  // empty value: malformed packet
            (8.5, "0682"),  // 130
        ]
        for second in 0..<10 {
            lines.append(Self.tpvLine(second))
            for (time, hex) in notifications where Int(time) == second {
                lines.append(Self.hrmLine(hex.replacingOccurrences(of: " ", with: ""), at: time))
            }
        }
        let inputs = try Self.load(lines)
        #expect(inputs.stats.hrmLines == 9)
        #expect(inputs.stats.hrmMalformed == 3)
        #expect(inputs.stats.heartRateSamples == 6)
        #expect(inputs.stats.tpvReports == 10)

        let samples = inputs.items.compactMap { if case .heartRate(let s) = $0 { s } else { nil } }
        #expect(samples.map(\.bpm) == [100, 110, 200, 120, 140, 130])
        #expect(samples.map(\.contact) == [true, true, false, nil, true, true])
        #expect(samples[0].rrIntervalsMs == [3.90625])
        #expect(samples[0].time == Timestamp(iso8601: "2026-05-10T07:30:00.500Z"))

        let report = Replay.run(inputs, configuration: TrackerConfiguration())
        #expect(report.summary.heartRateMax == 140)
        #expect(report.summary.heartRateAverage == Double(100 + 110 + 120 + 140 + 130) / 5)
        let json = report.json()
        #expect(json.contains(#""hr_max":140"#))
        #expect(json.contains(#""hr_samples":6,"hrm_lines":9,"hrm_malformed":3"#))
    }

    /// A notification goes where its time puts it, whatever its place in the file.
    @Test func theLinesTimeIsAuthoritative() throws {
        var lines = (0..<8).map(Self.tpvLine)
        lines.insert(Self.hrmLine("0678", at: 5.25), at: 1)  // written early
        lines.append(Self.hrmLine("0650", at: 2.75))  // written late
        let inputs = try Self.load(lines)
        let order: [String] = inputs.items.map {
            switch $0 {
            case .fix(let fix): "fix \(fix.time!.milliseconds - Self.start.milliseconds)"
            case .heartRate(let sample): "hr \(sample.time.milliseconds - Self.start.milliseconds)"
            default: "other"
            }
        }
        #expect(order == ["fix 0", "fix 1000", "fix 2000", "hr 2750", "fix 3000", "fix 4000", "fix 5000", "hr 5250", "fix 6000", "fix 7000"])
    }

    /// Raw lines stay where they were (a recorded replay keeps the log as received); the decoded
    /// sample follows its time.
    @Test func rawLinesKeepTheirPlace() throws {
        var lines = (0..<4).map(Self.tpvLine)
        let hrm = Self.hrmLine("0678", at: 3.5)
        lines.insert(hrm, at: 1)
        let inputs = try Self.load(lines, keepRawLines: true)
        let raw = inputs.items.compactMap { if case .rawLine(let line) = $0 { line } else { nil } }
        #expect(raw == lines)
        #expect(inputs.items.last == .heartRate(HeartRateSample(time: Self.start.adding(seconds: 3.5), bpm: 120, contact: true)))
    }

    /// Notifications from HRM lines and an HR log merge into one time-ordered stream.
    @Test func mergesWithAHeartRateLog() throws {
        let lines = (0..<6).map(Self.tpvLine) + [Self.hrmLine("0696", at: 1.5), Self.hrmLine("06A0", at: 3.5)]
        let log = """
            {"time":"2026-05-10T07:30:00.500Z","bpm":140,"rr_ms":[],"contact":true}
            {"time":"2026-05-10T07:30:02.500Z","bpm":145,"rr_ms":[],"contact":true}
            {"time":"2026-05-10T07:30:04.500Z","bpm":155,"rr_ms":[],"contact":true}

            """
        let inputs = try Self.load(lines, heartRateLog: log)
        let samples = inputs.items.compactMap { if case .heartRate(let s) = $0 { s } else { nil } }
        #expect(samples.map(\.bpm) == [140, 150, 145, 160, 155])
        #expect(inputs.stats.heartRateSamples == 5)
        let report = Replay.run(inputs, configuration: TrackerConfiguration())
        #expect(report.summary.heartRateMax == 160)
        #expect(report.summary.heartRateAverage == 150)
    }

    /// A log of nothing but HRM lines is still gpsd JSON; with no fix the run has heart rate only.
    @Test func hrmLinesWithoutFixes() throws {
        let inputs = try Self.load([Self.hrmLine("0650", at: 0), Self.hrmLine("065A", at: 1)])
        #expect(inputs.stats.heartRateSamples == 2)
        let report = Replay.run(inputs, configuration: TrackerConfiguration())
        #expect(report.summary.heartRateAverage == 85)
        #expect(report.counts.accepted == 0)
    }
}
