import FoundationEssentials
import PacerCore

/// A race course for `pacerctl replay --course`: one JSON object,
///
///     {"points": [[45.4779, 9.2241], [45.4783, 9.2250], ...],
///      "stages": [120, 480],
///      "start_time": "2026-05-10T07:30:00Z"}
///
/// `points`: the path from the start line to the arrival, [latitude, longitude] in degrees
/// (WGS84), in running order. `stages` (optional): indices into `points` of the stages between
/// them. `start_time` (optional): the official start (the gun), ISO-8601 UTC. The course is
/// checked as the device checks one (RaceCourse: 2 to 20,000 points, at most 50 km, at most
/// 10 stages).
public struct RaceCourseFile: Sendable {
    public var course: RaceCourse
    public var startTime: Timestamp?

    private struct Document: Decodable {
        var points: [[Double]]
        var stages: [Int]?
        var start_time: String?
    }

    public static func load(path: String) throws(ReplayError) -> RaceCourseFile {
        try parse(LogFile(path: path).bytes, path: path)
    }

    public static func parse(_ bytes: [UInt8], path: String) throws(ReplayError) -> RaceCourseFile {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(bytes))
        } catch {
            throw ReplayError(.malformedLine, "\(path): not a course (expected {\"points\": [[lat, lon], ...], \"stages\"?: [index, ...], \"start_time\"?: ISO-8601})")
        }
        var latitudes: [Double] = [], longitudes: [Double] = []
        for (i, point) in document.points.enumerated() {
            guard point.count == 2 else {
                throw ReplayError(.malformedLine, "\(path): point \(i) has \(point.count) numbers, expected [latitude, longitude]")
            }
            latitudes.append(point[0])
            longitudes.append(point[1])
        }
        var startTime: Timestamp?
        if let text = document.start_time {
            guard let time = Timestamp(iso8601: text) else {
                throw ReplayError(.malformedLine, "\(path): start_time \"\(text)\" is not ISO-8601 UTC (like 2026-05-10T07:30:00Z)")
            }
            startTime = time
        }
        do {
            let course = try RaceCourse(latitudes: latitudes, longitudes: longitudes, stages: document.stages ?? [])
            return RaceCourseFile(course: course, startTime: startTime)
        } catch {
            throw ReplayError(.malformedLine, "\(path): \(error)")
        }
    }
}
