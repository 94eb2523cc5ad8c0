import CloudModel
import CloudStore

/// Makes a course over streets through the waypoints (start, stages, arrival): pgRouting over
/// the loaded street data when the store is PostgreSQL; SQLite has none.
protocol RouteCalculator: Sendable {
    func route(through waypoints: [LatLon], maxLengthM: Double) async throws -> [LatLon]
}

/// Why no route could be made, in words for the organiser ("the arrival is 800 m from any street").
struct RouteError: Error, Sendable, CustomStringConvertible {
    var message: String
    var description: String { message }
    init(_ message: String) { self.message = message }
}

/// The store's street router (`StreetRouter`, pgRouting), its refusals in words.
struct StreetRoutes: RouteCalculator {
    let streets: StreetRouter

    func route(through waypoints: [LatLon], maxLengthM: Double) async throws -> [LatLon] {
        do {
            return try await streets.route(through: waypoints, maxLengthM: maxLengthM).points
        } catch let error as CalculatedRouteError {
            throw RouteError(error.message)
        }
    }
}
