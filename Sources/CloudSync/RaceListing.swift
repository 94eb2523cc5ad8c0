import FoundationEssentials
import PacerContract
import PacerCore

/// `pacerctl race`: the races of the device's runner from the last sync (course, start, bib),
/// soonest first. pacerd answers it over the control socket; pacerctl makes the same from the
/// state directory when pacerd is down.
public struct RaceListing: Codable, Equatable, Sendable {
    public struct Entry: Codable, Equatable, Sendable {
        public var id: String
        public var name: String
        public var starts_at: String
        /// "09:30 on 6 Dec (in 3 days)", in the account's zone.
        public var starts: String
        public var bib: Int
        public var status: String
        public var length_m: Double
        public var stages: Int
    }

    public var state: PlanListing.State
    public var fetched_at: String?
    public var sync: Bool
    public var races: [Entry]

    public static func make(storePath: String, syncOn: Bool, nowMs: Int64) throws -> RaceListing {
        guard let (sync, fetchedAt) = try CloudSync.lastSync(storePath: storePath).map({ ($0.sync, $0.fetchedAt) }) else {
            return RaceListing(state: .noneFetched, sync: syncOn, races: [])
        }
        if sync.sections.profile?.linked == false {
            return RaceListing(state: .notLinked, fetched_at: fetchedAt, sync: syncOn, races: [])
        }
        let zone = ZoneFile.offsets(named: sync.sections.profile?.timezone ?? "UTC")
        let now = Timestamp(milliseconds: nowMs)
        let races = (sync.sections.races?.races ?? []).map { race in
            Entry(id: race.id, name: race.name, starts_at: race.starts_at,
                  starts: WireTime.milliseconds(race.starts_at).map { AlertClock.text(Timestamp(milliseconds: $0), now: now, zone: zone) } ?? race.starts_at,
                  bib: race.bib, status: race.status, length_m: race.length_m, stages: max(0, race.waypoints.count - 2))
        }
        return RaceListing(state: .plan, fetched_at: fetchedAt, sync: syncOn, races: races)
    }

    /// What `pacerctl race` prints.
    public var text: String {
        let off = sync ? "" : " The sync channel is off (no [upload] url, or [upload] sync = false)."
        switch state {
        case .noneFetched:
            return "No races fetched yet: pacerd fetches them from the cloud once the device is linked (pacerctl cloud link).\(off)"
        case .notLinked:
            return "Linked to no account: the cloud has no races for this device (pacerctl cloud link links it).\(off)"
        case .plan:
            var lines = ["Races" + (fetched_at.map { " (fetched \($0))" } ?? "") + "." + off]
            if races.isEmpty { lines.append("Enrolled in no race: find one on the cloud's Races page.") }
            for race in races {
                let stages = race.stages == 0 ? "" : race.stages == 1 ? ", 1 stage" : ", \(race.stages) stages"
                lines.append("\(race.starts)  \(race.name): bib \(race.bib), \(race.status), "
                             + "\(FixedDecimal.format(race.length_m / 1000, decimals: 2) ?? "?") km\(stages)  [\(race.id)]")
            }
            return lines.joined(separator: "\n")
        }
    }
}
