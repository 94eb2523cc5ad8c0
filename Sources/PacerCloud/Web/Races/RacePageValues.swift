import CloudModel
import Foundation

/// The race page's values: what it says of the race and of the viewer's part in it, the first
/// leaderboard (the server's, so the page reads without its script), and the script's data.
enum RacePageValues {
    struct ScriptData: Encodable {
        let id: String
        let code: String?
        let path: [[Double]]
        let waypoints: [[Double]]
        let unit: String
        let frame: RaceFrame.View?
    }

    static func make(_ seen: RaceAccessCheck.Seen, frame: RaceFrame?, account: Account?, nowMs: Int64, map: MapSettings,
                     linkBase: String) throws -> [String: Any] {
        let race = seen.race
        let format = RaceFormat(account: account)
        let calendar = RunnerCalendar(race.timezone, nowMs: nowMs)
        let unit = PageLayout.units
        var values: [String: Any] = [
            "title": race.name, "id": race.id, "name": race.name, "starts": format.starts(race), "length": RunnerFormat.distance(race.lengthM),
            "stages": race.waypoints.count == 3 ? "1 stage" : race.waypoints.count > 3 ? "\(race.waypoints.count - 2) stages" : "no stages",
            "access_text": race.access == .open ? "Open to all" : "By invitation",
            "closes": (nowMs <= race.closesMs ? "Registration open until " : "Registration closed ") + calendar.dateTime(race.closesMs),
            "organiser": seen.isOrganiser, "observer": seen.isObserver, "signed_in": account != nil,
            "tiles": map.tileURL ?? "", "attribution": map.tileAttribution,
            "stylesheet": Assets.url("leaflet/leaflet.css"), "referrer": PageData.mapReferrer, "unit": unit.symbol,
        ]
        if let code = seen.code { values["code"] = code }
        if let from = race.postponedFromMs { values["postponed"] = calendar.dateTime(from) }
        if let entry = seen.entry {
            values["bib"] = String(entry.bib)
            values["entry_status"] = entry.status == .enrolled ? "enrolled; an organiser marks you present at the start" : entry.status.rawValue
            values["can_withdraw"] = nowMs < race.startsMs
        } else if account != nil, nowMs <= race.closesMs, race.access == .open || seen.code != nil {
            values["can_enrol"] = true
        }
        if account == nil {
            values["login"] = "/login?next=" + (("/races/" + race.id + (seen.code.map { "?code=" + $0 } ?? ""))
                .addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        }
        let view = frame?.view(following: [])
        values["rows"] = (view?.leaders ?? []).map { row(for: $0, madeMs: view?.made_ms ?? nowMs) }
        values["has_rows"] = !(view?.leaders.isEmpty ?? true)
        let data = ScriptData(id: race.id, code: seen.code, path: race.path.map { [$0.lat, $0.lon] }, waypoints: race.waypoints.map { [$0.lat, $0.lon] },
                              unit: unit.symbol, frame: view)
        values["data"] = try PageData.script(data)
        return values
    }

    /// A leaderboard row as the server writes it (the script writes the same from each frame).
    static func row(for row: RaceFrame.Row, madeMs: Int64) -> [String: Any] {
        [
            "place": row.place.map(String.init) ?? (row.status == .disqualified ? "DQ" : "–"), "bib": String(row.bib), "name": row.name,
            "distance": row.progress_m.map { RunnerFormat.distance($0) } ?? "",
            "gap": row.gap_ms.map { $0 == 0 ? "" : "+" + RaceFormat.clock(milliseconds: $0) } ?? row.gap_m.map { $0 < 1 ? "" : "−" + RunnerFormat.distance($0) } ?? "",
            "pace": row.pace_s_km.map { RunnerFormat.pace($0) } ?? "",
            "last": row.last_ms.map { RunnerFormat.age(milliseconds: max(0, madeMs - $0)) } ?? "",
            "gun": row.gun_ms.map { RaceFormat.clock(milliseconds: $0) } ?? "", "net": row.net_ms.map { RaceFormat.clock(milliseconds: $0) } ?? "",
            "dq": row.status == .disqualified,
        ]
    }
}
