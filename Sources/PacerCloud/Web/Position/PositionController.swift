import Hummingbird
import PacerContract
import Threads

extension CloudRoutes {
    func putPosition(_ request: Request, context: CloudRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let position = try JSONInput.decode(LivePosition.self, from: try await JSONInput.jsonBody(of: request, context: context))
        let deviceMs = try position.validate()
        // Ordered by the device's time, but never later than the server received it: one
        // position from a clock far ahead (9999-12-31) cannot hold the place for good. The
        // device's time stays in the stored position as data.
        let orderMs = min(deviceMs, WallClock.milliseconds())
        let stored = try await store.alerts.putPosition(device: device.id, timeMs: orderMs, json: try JSONInput.canonical(position))
        if stored, let runner = device.accountID {
            // A position from a private place (one asked for during an alert) is shown with the
            // alert but never joins the trail.
            if let runID = position.run_id, try await storedState(device.id)?.in_private_place != true {
                try await store.monitoring.addTrailPoint(device: device.id, runID: runID, point: TrailPoint(timeMs: orderMs, lat: position.lat, lon: position.lon),
                                              forgetBeforeMs: orderMs - configuration.monitoring.trailKept.milliseconds)
            }
            await hub.publish(HubEvent(kind: .position, account: runner, subject: device.id))
        }
        return try JSONInput.encode(PositionReply(stored: stored))
    }

    func getPosition(context: CloudRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        guard let json = try await store.alerts.position(device: device.id) else { throw APIError.notFound("no position stored yet") }
        return JSONInput.json(Array(json.utf8))
    }
}

struct PositionReply: Encodable {
    /// false: a newer position was stored already, so this one was ignored.
    var stored: Bool
}
