import Foundation
import Glibc
import PacerCore
import PacerTestSupport

/// A receiver's NMEA log cut into epochs (the sentences from one RMC up to the next), so that
/// parts of it can be played by separate gpsfakes (a gpsd restart: the receiver goes on while
/// gpsd is away) and each epoch's GPS time is known.
struct NMEAEpochs: Sendable {
    /// Each epoch's sentences, each with its CR LF.
    let sentences: [[String]]
    /// Each epoch's time, from its RMC (time and date).
    let times: [Timestamp]

    var count: Int { sentences.count }

    init(contentsOf path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var sentences: [[String]] = []
        var times: [Timestamp] = []
        // NMEA lines end in CR LF, which Swift's String takes as one Character.
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            if fields.first?.hasSuffix("RMC") == true {
                guard fields.count > 9, let time = Self.time(hhmmss: fields[1], ddmmyy: fields[9]) else {
                    throw FixtureError("\(path): an RMC without time and date: \(line)")
                }
                sentences.append([])
                times.append(time)
            }
            guard !sentences.isEmpty else { continue }  // anything before the first RMC
            sentences[sentences.count - 1].append(String(line) + "\r\n")
        }
        guard !sentences.isEmpty else { throw FixtureError("\(path): no RMC sentences") }
        self.sentences = sentences
        self.times = times
    }

    /// Writes the epochs in `range` as a log for gpsfake.
    func write(_ range: Range<Int>, to path: String) throws {
        try Data(sentences[range].joined().joined().utf8).write(to: URL(fileURLWithPath: path))
    }

    /// The first epoch at or after `time`, or nil after the last.
    func epoch(atOrAfter time: Timestamp) -> Int? {
        times.firstIndex { $0 >= time }
    }

    /// "073000.00" and "100526" as a UTC time.
    private static func time(hhmmss: Substring, ddmmyy: Substring) -> Timestamp? {
        let digits = Array(hhmmss.utf8), date = Array(ddmmyy.utf8)
        guard digits.count >= 6, date.count == 6 else { return nil }
        func number(_ bytes: ArraySlice<UInt8>) -> Int32? { Int32(String(decoding: bytes, as: UTF8.self)) }
        guard let hour = number(digits[0..<2]), let minute = number(digits[2..<4]),
            let seconds = Double(String(decoding: digits[4...], as: UTF8.self)),
            let day = number(date[0..<2]), let month = number(date[2..<4]), let year = number(date[4..<6])
        else { return nil }
        var parts = tm()
        parts.tm_year = year + 100  // NMEA's two-digit years are 20yy
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        let whole = timegm(&parts)
        guard whole >= 0 else { return nil }
        return Timestamp(milliseconds: Int64(whole) * 1000 + Int64((seconds * 1000).rounded()))
    }
}
