import CloudModel
import CloudStore
import Hummingbird
import PacerContract
import Threads

/// The device's live position (`/v1/position`): stored for its alert pages and its monitors'
/// dashboards, and the trail of its run.
struct PositionController: Sendable {
    let alerts: AlertRepository
    let monitoring: MonitoringRepository
    let heartbeats: Heartbeats
    /// Tells dashboards the runner's device moved.
    let hub: any EventHub
    /// How long a run's live trail is kept (`MonitorSettings.trailKept`).
    let trailKept: Duration

    func addRoutes(to device: PolicedRoutes<CloudRequestContext>) {
        device.on(.put, "position", DeviceAccess()) { request, context in try await putPosition(request, context: context) }
        device.on(.get, "position", DeviceAccess()) { _, context in try await getPosition(context: context) }
    }

    private func putPosition(_ request: Request, context: DeviceContext) async throws -> Response {
        let device = context.device
        let position = try JSONInput.decode(LivePosition.self, from: try await JSONInput.jsonBody(of: request, context: context))
        let deviceMs = try position.validate()
        // Ordered by the device's time, but never later than the server received it: one
        // position from a clock far ahead (9999-12-31) cannot hold the place for good. The
        // device's time stays in the stored position as data.
        let orderMs = min(deviceMs, WallClock.milliseconds())
        let stored = try await alerts.putPosition(device: device.id, timeMs: orderMs, json: try JSONInput.canonical(position))
        if stored, let runner = device.accountID {
            // A position from a private place (one asked for during an alert) is shown with the
            // alert but never joins the trail.
            if let runID = position.run_id, try await heartbeats.stored(device.id)?.in_private_place != true {
                try await monitoring.addTrailPoint(device: device.id, runID: runID, point: TrailPoint(timeMs: orderMs, lat: position.lat, lon: position.lon),
                                              forgetBeforeMs: orderMs - trailKept.milliseconds)
            }
            await hub.publish(HubEvent(kind: .position, account: runner, subject: device.id))
        }
        return try JSONInput.encode(PositionReply(stored: stored))
    }

    private func getPosition(context: DeviceContext) async throws -> Response {
        let device = context.device
        guard let json = try await alerts.position(device: device.id) else { throw APIError.notFound("no position stored yet") }
        return JSONInput.json(Array(json.utf8))
    }
}

struct PositionReply: Encodable {
    /// false: a newer position was stored already, so this one was ignored.
    var stored: Bool
}
