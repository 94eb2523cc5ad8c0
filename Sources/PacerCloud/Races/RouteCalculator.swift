import CloudModel

/// Makes a course over streets through the waypoints (start, stages, arrival): pgRouting over
/// the loaded street data when the store is PostgreSQL; SQLite has none.
protocol RouteCalculator: Sendable {
    func route(through waypoints: [RacePoint], maxLengthM: Double) async throws -> [RacePoint]
}

/// Why no route could be made, in words for the organiser ("the stage 3 is 800 m from any street").
struct RouteError: Error, Sendable, CustomStringConvertible {
    var message: String
    var description: String { message }
    init(_ message: String) { self.message = message }
}
