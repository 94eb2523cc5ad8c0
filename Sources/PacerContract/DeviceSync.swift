/// `GET /v1/device/sync` (openapi.yaml `DeviceSync`): what the cloud has for a device, in
/// sections, each with a version (a digest of its content) so the device can tell what changed.
/// The reply's `ETag` covers every section: sent back as `If-None-Match`, an unchanged sync is a
/// bodiless 304. A section a device does not know is ignored by it; one the cloud does not send
/// is nil. A later section is one more optional field here and one more type.
public struct DeviceSync: Codable, Equatable, Sendable {
    public struct Sections: Codable, Equatable, Sendable {
        public var notices: NoticesSection?
        public var profile: ProfileSection?
        public var plan: PlanSection?
        public var races: RacesSection?

        public init(notices: NoticesSection?, profile: ProfileSection?, plan: PlanSection? = nil, races: RacesSection? = nil) {
            self.notices = notices
            self.profile = profile
            self.plan = plan
            self.races = races
        }

        /// Each section's name and version, in the order above, for "what changed".
        public var versions: [(name: String, version: String)] {
            var all: [(String, String)] = []
            if let notices { all.append((NoticesSection.name, notices.version)) }
            if let profile { all.append((ProfileSection.name, profile.version)) }
            if let plan { all.append((PlanSection.name, plan.version)) }
            if let races { all.append((RacesSection.name, races.version)) }
            return all
        }
    }

    public var sections: Sections

    public init(sections: Sections) {
        self.sections = sections
    }
}

/// `notices`: short texts to say once on the device, oldest first, until it acknowledges them
/// (`POST /v1/device/sync/ack`).
public struct NoticesSection: Codable, Equatable, Sendable {
    public static let name = "notices"
    /// At most this many are sent at once (the oldest); the rest follow once those are acknowledged.
    public static let maxItems = 50

    public var version: String
    public var items: [Notice]

    public init(version: String, items: [Notice]) {
        self.version = version
        self.items = items
    }
}

public struct Notice: Codable, Equatable, Sendable {
    /// A lowercase UUID.
    public var id: String
    /// Cleaned for speech (`NoticeText.clean`), at most `NoticeText.maxLength` characters.
    public var text: String
    /// When it was queued (`Time`).
    public var created_at: String

    public init(id: String, text: String, created_at: String) {
        self.id = id
        self.text = text
        self.created_at = created_at
    }
}

/// `profile`: the account's display name and timezone; a device no account owns gets
/// `ProfileSection.unowned`'s defaults.
public struct ProfileSection: Codable, Equatable, Sendable {
    public static let name = "profile"
    public static let defaultDisplayName = "Runner"
    public static let defaultTimezone = "UTC"

    public var version: String
    public var display_name: String
    /// An IANA zone name ("Europe/Rome").
    public var timezone: String
    /// Whether an account owns the device (false: the two fields above are the defaults).
    public var linked: Bool
    /// "km" or "mi": what the account reads, and so what the device speaks (its `[units]`);
    /// nil while no account owns it (the device keeps its config file's), or from an older cloud.
    public var units: String?

    public init(version: String, display_name: String, timezone: String, linked: Bool, units: String? = nil) {
        self.version = version
        self.display_name = display_name
        self.timezone = timezone
        self.linked = linked
        self.units = units
    }
}

/// `POST /v1/device/sync/ack`: the notices the device has said. Idempotent.
public struct NoticeAck: Codable, Equatable, Sendable {
    /// At most this many ids per request.
    public static let maxIDs = 100

    public var notice_ids: [String]

    public init(notice_ids: [String]) {
        self.notice_ids = notice_ids
    }
}

/// Notice texts as they are spoken: one line of printable text, at most `maxLength` characters.
public enum NoticeText {
    public static let maxLength = 200

    /// Control characters and line breaks become spaces, runs of spaces one, ends trimmed; and
    /// the characters espeak-ng would read as markup or as their names (`<>{}[]|\^~*_#`) dropped.
    public static func clean(_ text: String) -> String {
        var out = ""
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory == .control || scalar.properties.isWhitespace
                || scalar.properties.generalCategory == .format || scalar.properties.generalCategory == .lineSeparator
                || scalar.properties.generalCategory == .paragraphSeparator {
                pendingSpace = !out.isEmpty
                continue
            }
            if "<>{}[]|\\^~*_#`".unicodeScalars.contains(scalar) { continue }
            if pendingSpace {
                out.unicodeScalars.append(" ")
                pendingSpace = false
            }
            out.unicodeScalars.append(scalar)
        }
        return out
    }
}
