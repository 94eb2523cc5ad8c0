import CloudModel
import CloudStore
import Foundation
import Hummingbird
import PacerContract

/// A device in race mode (#34, openapi.yaml `/v1/races/{race_id}/positions`): its runner's
/// positions, a backlog after an outage too, and the start and finish crossings; the reply has
/// the runner's place for the device to say.
struct DeviceRacesController: Sendable {
    let lookups: RaceLookups
    let writer: RacePositionWriter
    let frames: RaceFrames
    let settings: RaceSettings
    let wallClock: @Sendable () -> Int64

    func addRoutes(to device: PolicedRoutes<CloudRequestContext>) {
        device.on(.post, "races/:race_id/positions", DeviceAccess()) { request, context in try await positions(request, context) }
    }

    private func positions(_ request: Request, _ context: DeviceContext) async throws -> Response {
        let raceID = context.parameters.get("race_id") ?? ""
        // Only the runner's own device, and only in a race the runner is enrolled in; any
        // other race (or none) is the same 404, so a device learns nothing of races not its own.
        guard WireLimits.isLowercaseUUID(raceID), let accountID = context.device.accountID, let known = try await lookups.race(raceID, runner: accountID),
              let entry = known.runners[accountID] else {
            throw APIError(.notFound, "not_found", "this device's runner is not enrolled in a race with this id")
        }
        let race = known.race
        let body = try JSONInput.decode(RacePositions.self, from: try await JSONInput.jsonBody(of: request, context: context))
        let batch = try Self.validated(body, race: race, accountID: accountID, positionsUntilMs: settings.positionsUntil.milliseconds)
        // A disqualified runner's marker stays where it was: nothing more is taken.
        guard entry.status != .disqualified else { return try JSONInput.encode(RacePositionsReply(stored: 0)) }
        let stored = batch.positions.isEmpty && batch.startCrossMs == nil && batch.finishMs == nil ? 0 : try await writer.write(batch)
        if stored > 0 || batch.startCrossMs != nil || batch.finishMs != nil { frames.noteChange(raceID: race.id) }
        // The place from this instance's copy of the newest frame (none yet at a device's first post).
        frames.noteDevice(raceID: race.id)
        let ranked = frames.row(raceID: race.id, bib: entry.bib)
        let place = ranked?.row.place
        return try JSONInput.encode(RacePositionsReply(stored: stored, place: place, of: place == nil ? nil : ranked?.started))
    }

    /// The body's positions as a batch, or a 400 naming the first wrong field.
    static func validated(_ body: RacePositions, race: Race, accountID: String, positionsUntilMs: Int64) throws -> RaceRepository.PositionBatch {
        guard body.positions.count <= RaceWire.maxPositions else {
            throw JSONInput.invalid("positions", "at most \(RaceWire.maxPositions) positions per request; send the rest in the next")
        }
        let earliest = race.startsMs - 3_600_000, latest = race.startsMs + positionsUntilMs
        func time(_ text: String, _ field: String) throws -> Int64 {
            guard let ms = WireTime.milliseconds(text) else { throw JSONInput.invalid(field, "\(WireLimits.quoted(text)) is not a time like 2026-05-10T07:30:00Z") }
            guard (earliest...latest).contains(ms) else {
                throw JSONInput.invalid(field, "\(text) is outside the race (from an hour before its start to \(positionsUntilMs / 3_600_000) h after)")
            }
            return ms
        }
        var positions: [(tMs: Int64, lat: Double, lon: Double, progressM: Double)] = []
        for (index, position) in body.positions.enumerated() {
            let field = "positions[\(index)]"
            let t = try time(position.time, field + ".time")
            guard position.lat.isFinite, (-90...90).contains(position.lat) else { throw JSONInput.invalid(field + ".lat", "must be -90 to 90") }
            guard position.lon.isFinite, (-180...180).contains(position.lon) else { throw JSONInput.invalid(field + ".lon", "must be -180 to 180") }
            guard position.progress_m.isFinite, RaceWire.progressM.contains(position.progress_m) else {
                throw JSONInput.invalid(field + ".progress_m", "must be \(Int(RaceWire.progressM.lowerBound)) to \(Int(RaceWire.progressM.upperBound)) m")
            }
            positions.append((t, position.lat, position.lon, min(position.progress_m, race.lengthM)))
        }
        let started = try body.started_at.map { try time($0, "started_at") }
        let finished = try body.finished_at.map { try time($0, "finished_at") }
        if let started, let finished, finished < started { throw JSONInput.invalid("finished_at", "is before started_at") }
        return RaceRepository.PositionBatch(raceID: race.id, accountID: accountID, positions: positions, startCrossMs: started, finishMs: finished)
    }
}
