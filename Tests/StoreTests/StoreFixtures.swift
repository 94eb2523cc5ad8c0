import Foundation
import PacerCore
@testable import Store

/// A store in a fresh temporary directory, removed by `cleanUp()`.
struct TemporaryStore {
    let directory: String
    let path: String

    init() {
        directory = NSTemporaryDirectory() + "pacer-store-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = directory + "/pacer.db"
    }

    func open(readOnly: Bool = false) throws -> RunStore { try RunStore(path: path, readOnly: readOnly) }

    func cleanUp() { try? FileManager.default.removeItem(atPath: directory) }
}

let runStart = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!

/// A plausible second of running: sample i at 3 m/s heading north-east, HR ramping, climbing
/// from 120 m (no altitude every 11th second, a 2D fix).
func sample(_ i: Int) -> TrackSample {
    TrackSample(
        time: runStart.adding(seconds: Double(i)),
        coordinate: WGS84.offsetting(Coordinate(latitude: 45.4775, longitude: 9.2241), east: Double(i) * 2.1, north: Double(i) * 2.1),
        speed: 2.9 + Double(i % 7) * 0.0137, distance: Double(i) * 3.0001, moving: i % 50 != 0, movingTime: Double(i) * 0.98,
        altitude: i % 11 == 0 ? nil : 120 + Double(i) * 0.037)
}

func heartRate(_ i: Int) -> HeartRateSample {
    HeartRateSample(time: runStart.adding(seconds: Double(i) + 0.25), bpm: 100 + i % 60,
                    rrIntervalsMs: i % 3 == 0 ? [] : [600 - Double(i % 60), 605], contact: i % 97 == 0 ? false : true)
}

func rawLine(_ i: Int) -> String {
    #"{"class":"TPV","mode":3,"time":"\#(runStart.adding(seconds: Double(i)).iso8601)","lat":45.4775,"lon":9.2241,"speed":3.0,"track":45.0}"#
}

extension RunRecorder {
    /// Records `seconds` of a run (1 Hz samples, HR and raw lines) with the usual batching.
    mutating func recordSeconds(_ range: Range<Int>) throws {
        for i in range {
            record(rawLine: rawLine(i), at: runStart.adding(seconds: Double(i)))
            record([.sample(sample(i))])
            record(heartRate(i))
            try flushIfDue()
        }
    }
}
