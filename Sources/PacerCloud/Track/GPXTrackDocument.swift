import Export
import PacerContract
import PacerCore

/// `GET /v1/runs/{run_id}/gpx`: the run through Export's GPXWriter, the one GPX writer (the same
/// as `pacerctl export`), streamed sample by sample.
struct GPXTrackDocument: TrackDocument {
    /// What the writer's sink has written since it was last taken.
    private final class Output {
        var text = ""

        func take() -> String {
            defer { text = "" }
            return text
        }
    }

    private let run: ExportRun
    private let output = Output()
    private var writer: GPXWriter

    init(runID: String, startTime: String) {
        // A stored summary's start_time was checked on the way in; 0 only for a summary stored
        // before that check.
        run = ExportRun(name: "Run \(runID)", startTime: Timestamp(milliseconds: WireTime.milliseconds(startTime) ?? 0),
                        distance: 0, movingTime: 0, elapsedTime: 0)
        writer = GPXWriter { [output] text in output.text += text }
    }

    mutating func start() throws -> String {
        try writer.begin(run)
        return output.take()
    }

    mutating func add(_ sample: ChunkSample) throws -> String {
        try writer.add(ExportPoint(time: Timestamp(milliseconds: sample.timeMs),
                                   coordinate: Coordinate(latitude: sample.lat, longitude: sample.lon), heartRate: sample.heartRate))
        return output.take()
    }

    mutating func end() throws -> String {
        try writer.end()
        return output.take()
    }
}
