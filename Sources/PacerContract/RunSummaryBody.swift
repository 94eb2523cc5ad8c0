/// `PUT /v1/runs/{run_id}` (openapi.yaml `RunSummary`): a finished run's totals. The run is
/// complete in the cloud once this and chunks 0..<`chunks` are there.
public struct RunSummaryBody: Codable, Equatable, Sendable {
    /// What `state` may be.
    public static let states = ["finished", "interrupted"]

    public var start_time: String
    /// Kept as sent even when before `start_time`: a device's clock can step back.
    public var end_time: String
    public var distance_m: Double
    public var moving_time_s: Double
    public var elapsed_time_s: Double
    public var avg_pace_s_per_km: Double?
    public var max_speed_mps: Double?
    public var hr_avg: Double?
    public var hr_max: Int?
    public var chunks: Int
    public var state: String
    /// The planned session (`PlannedSession.id`) the run followed: the cloud marks it done.
    public var planned_session_id: String?
    /// The name of the workout the run followed, planned or from a file.
    public var workout_name: String?

    public init(start_time: String, end_time: String, distance_m: Double, moving_time_s: Double, elapsed_time_s: Double,
                avg_pace_s_per_km: Double?, max_speed_mps: Double?, hr_avg: Double?, hr_max: Int?, chunks: Int, state: String,
                planned_session_id: String? = nil, workout_name: String? = nil) {
        self.start_time = start_time
        self.end_time = end_time
        self.distance_m = distance_m
        self.moving_time_s = moving_time_s
        self.elapsed_time_s = elapsed_time_s
        self.avg_pace_s_per_km = avg_pace_s_per_km
        self.max_speed_mps = max_speed_mps
        self.hr_avg = hr_avg
        self.hr_max = hr_max
        self.chunks = chunks
        self.state = state
        self.planned_session_id = planned_session_id
        self.workout_name = workout_name
    }
}
