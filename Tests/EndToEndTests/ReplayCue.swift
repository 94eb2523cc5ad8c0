import Foundation
import PacerCore
import PacerTestSupport

/// A cue as `pacerctl replay --workout FILE --json` decides it for a gpsd log: what pacerd
/// decides live for the same input (README: live equals replay).
struct ReplayCue: Sendable, Equatable {
    var time: Timestamp
    var kind: String
    var text: String

    /// The cues `pacerctl replay` decides for `gpsd` (a gpsd JSON log) coached by `workout`.
    static func decided(gpsd: String, workout: String) async throws -> [ReplayCue] {
        let replay = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["replay", "--gps", gpsd, "--workout", workout, "--json"])
        guard replay.status == 0 else { throw FixtureError("pacerctl replay \(gpsd) failed (\(replay.status)): \(replay.stderr)") }
        let document = try JSONSerialization.jsonObject(with: Data(replay.stdout.utf8)) as? [String: Any]
        return try (document?["cues"] as? [[String: Any]] ?? []).map { cue in
            guard let time = (cue["time"] as? String).flatMap(Timestamp.init(iso8601:)), let kind = cue["kind"] as? String,
                let text = cue["text"] as? String
            else { throw FixtureError("a cue without time, kind or text: \(cue)") }
            return ReplayCue(time: time, kind: kind, text: text)
        }
    }

    /// Writes `source` (a gpsd JSON log) to `path` without the reports timed in `gap`: the log
    /// pacerd reads when gpsd is away for those epochs.
    static func writeLog(_ source: String, to path: String, without gap: Range<Timestamp>) throws {
        let lines = try String(contentsOfFile: source, encoding: .utf8).split(separator: "\n").filter { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard let time = (object?["time"] as? String).flatMap(Timestamp.init(iso8601:)) else { return true }
            return !gap.contains(time)
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
    }
}
