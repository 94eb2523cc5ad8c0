import CloudModel
import Export
import PacerContract
import PacerCore

/// A run as a GPX, TCX or FIT file, through the Export module's writers: the same writers as
/// `pacerctl runs export`. GPX and TCX go out sample by sample; FIT, whose header holds its
/// size, comes out whole at the end.
struct ExportTrackDocument: TrackDocument {
    /// What the writer's sink has written since it was last taken.
    private final class Output {
        var bytes: [UInt8] = []

        func take() -> [UInt8] {
            defer { bytes = [] }
            return bytes
        }
    }

    private let run: ExportRun
    private let output = Output()
    private var writer: any ExportWriter

    /// `title`: the activity's name (an imported file's), written as the file's name; else "Run <id>".
    /// `sport`: what the activity is, which every format says.
    init(format: FileFormat, runID: String, summary: RunSummaryBody, title: String? = nil, sport: Sport = .run) {
        // A stored summary's start_time was checked on the way in; 0 only for a summary stored
        // before that check. The cloud keeps no laps: TCX and FIT get one for the whole run.
        run = ExportRun(name: title ?? "Run \(runID)", startTime: Timestamp(milliseconds: WireTime.milliseconds(summary.start_time) ?? 0),
                        distance: summary.distance_m, movingTime: summary.moving_time_s, elapsedTime: summary.elapsed_time_s,
                        averageHeartRate: summary.hr_avg, maxHeartRate: summary.hr_max, sport: Self.exportSport(sport))
        writer = format.makeWriter { [output] bytes in output.bytes += bytes }
    }

    static func exportSport(_ sport: Sport) -> ExportSport {
        switch sport {
        case .run: .running
        case .walk: .walking
        case .hike: .hiking
        case .ride: .cycling
        case .swim: .swimming
        case .other: .other
        }
    }

    mutating func start() throws -> [UInt8] {
        try writer.begin(run)
        return output.take()
    }

    mutating func add(_ sample: ChunkSample) throws -> [UInt8] {
        try writer.add(ExportPoint(time: Timestamp(milliseconds: sample.timeMs), coordinate: Coordinate(latitude: sample.lat, longitude: sample.lon),
                                   altitude: sample.altitudeM, heartRate: sample.heartRate, distance: sample.distanceM, speed: sample.speedMps))
        return output.take()
    }

    mutating func end() throws -> [UInt8] {
        try writer.end()
        return output.take()
    }
}
