import Foundation
import PacerCore
import Testing
@testable import PacerReplay

@Suite(.timeLimit(.minutes(10))) struct ControlLineTests {
    @Test func roundTrips() {
        let time = Timestamp(iso8601: "2026-05-10T07:30:04.250Z")!
        for control in RunControl.allCases {
            let line = ControlLine.line(control, time: time)
            #expect(ControlLine.parse(Array(line.utf8)) == control)
        }
        #expect(ControlLine.line(.lap, time: nil) == #"{"class":"PACER","control":"lap"}"#)
        #expect(ControlLine.parse(Array(#"{"class":"PACER","control":"jump"}"#.utf8)) == nil)
    }

    /// A lap line between fixes closes a lap there; pause/resume lines stop the counting between them.
    @Test func replayAppliesControlsWhereTheyAre() throws {
        var lines = (0..<9).map(ReplayBehaviourTests.tpvLine)
        lines.insert(ControlLine.line(.lap, time: nil), at: 4)
        let path = SharedData.temporaryFile(lines.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let report = Replay.run(try ReplayLoader.load(gpsPath: path, heartRatePath: nil), configuration: TrackerConfiguration())
        #expect(report.laps.count == 2)  // the button's, and the final one
        #expect(report.laps.first?.endTime == Timestamp(iso8601: "2026-05-10T07:30:03.000Z"))

        var paused = (0..<9).map(ReplayBehaviourTests.tpvLine)
        paused.insert(ControlLine.line(.resume, time: nil), at: 7)
        paused.insert(ControlLine.line(.pause, time: nil), at: 3)
        let pausedPath = SharedData.temporaryFile(paused.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: pausedPath) }
        let pausedReport = Replay.run(try ReplayLoader.load(gpsPath: pausedPath, heartRatePath: nil), configuration: TrackerConfiguration())
        #expect(pausedReport.summary.distance < report.summary.distance - 5)
    }

    @Test func anUnknownControlIsALocatedError() throws {
        let path = SharedData.temporaryFile(ReplayBehaviourTests.tpvLine(0) + "\n" + #"{"class":"PACER","control":"fly"}"# + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try ReplayLoader.load(gpsPath: path, heartRatePath: nil)
        } throws: { ($0 as? ReplayError)?.description.contains(":2: a PACER line") == true }
    }
}
