import PacerCore
import Synchronization

/// Named time zones for the device, from the system's tz database (Debian's tzdata). Each zone
/// is read once and kept: the account's zone changes rarely.
public enum ZoneFile {
    public static let directory = "/usr/share/zoneinfo"
    private static let loaded = Mutex<[String: ZoneOffsets]>([:])

    /// The zone `name` ("Europe/Rome", "UTC"), nil when it is not a zone name or not installed.
    public static func offsets(named name: String) -> ZoneOffsets? {
        if let known = loaded.withLock({ $0[name] }) { return known }
        // A zone name is a path under the directory: nothing that could leave it.
        guard (1...64).contains(name.utf8.count), name.first != "/", !name.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }),
              name.utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || "/_+-".utf8.contains($0) }),
              let bytes = try? SyncFile(path: directory + "/" + name, mode: 0o600).read(), let zone = ZoneOffsets(tzif: bytes) else { return nil }
        loaded.withLock { $0[name] = zone }
        return zone
    }

    /// The system's own zone (`/etc/localtime`), nil when it cannot be read.
    public static func system(path: String = "/etc/localtime") -> ZoneOffsets? {
        (try? SyncFile(path: path, mode: 0o600).read()).flatMap { ZoneOffsets(tzif: $0) }
    }

    /// The wearer's zone for alert texts: `[profile] timezone` when it names an installed zone,
    /// else the system's; nil (UTC, said as such) when neither can be read.
    public static func wearer(named name: String?) -> ZoneOffsets? {
        if let name, let zone = offsets(named: name) { return zone }
        return system()
    }
}
