import CloudModel
import Foundation
import PacerContract
import PacerCore

/// Who and when, as every alert the cloud writes says them (the e-mail, the webhook, the alert
/// page, the dashboard): the wearer's name, then the device; times through the core's one
/// formatter (`AlertClock`, "20:45 (3 min ago)") in the reader's zone where it is known, else
/// the wearer's.
struct AlertWords: Sendable {
    /// The wearer's name, cleaned (`WearerName`); nil: none known.
    var wearer: String?
    /// The device's name.
    var device: String
    /// The wearer's zone (their account's); nil: not known (an unlinked device), UTC said as such.
    var wearerZone: String?

    /// The wearer: the account's display name where the device belongs to an account, else the
    /// `wearer` the device sent (`[profile] name`), the newest. The device: the name it gives
    /// itself (`[sos] device_name`, the one its people know), else `storedName`, its name here.
    init(device storedName: String, account: Account?, messages: [AlertBody]) {
        device = messages.reversed().lazy.compactMap { $0.device.flatMap(WearerName.cleaned) }.first ?? storedName
        wearerZone = account?.timezone
        wearer = account.flatMap { WearerName.cleaned($0.displayName) }
            ?? messages.reversed().lazy.compactMap { $0.wearer.flatMap(WearerName.cleaned) }.first
    }

    init(wearer: String?, device: String, wearerZone: String?) {
        self.wearer = wearer.flatMap(WearerName.cleaned)
        self.device = device
        self.wearerZone = wearerZone
    }

    /// "Anna Rossi (anna-pacer)", or the device alone.
    var who: String { wearer.map { "\($0) (\(device))" } ?? device }

    /// A wire time ("2026-11-27T19:45:45.597Z") as "20:45 (3 min ago)" in `zone` (an IANA name;
    /// nil: the wearer's); one this server cannot place is the device's own text.
    func time(_ wire: String, nowMs: Int64, zone: String? = nil) -> String {
        guard let ms = AlertBody.placedTime(wire) else { return "at the device's time \(wire)" }
        return Self.time(ms: ms, nowMs: nowMs, zone: zone ?? wearerZone)
    }

    /// `ms` as "20:45 (3 min ago)" in the zone named `zone`; nil or unknown: UTC, said as such.
    static func time(ms: Int64, nowMs: Int64, zone: String?) -> String {
        let (time, now) = (Timestamp(milliseconds: ms), Timestamp(milliseconds: nowMs))
        guard let name = zone, let timeZone = TimeZone(identifier: name) else { return AlertClock.text(time, now: now, zone: nil) }
        return AlertClock.text(time, now: now) { instant in
            timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant.milliseconds) / 1000))
        }
    }
}
