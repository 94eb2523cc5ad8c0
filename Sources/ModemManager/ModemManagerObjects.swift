import Systemd

/// ModemManager's object tree (GetManagedObjects on /org/freedesktop/ModemManager1): the modems.
struct ModemManagerObjects {
    let objects: BusConnection.ManagedObjects

    /// Every modem, in ModemManager's numbering.
    var modems: [ModemInfo] {
        objects.compactMap { ModemInfo(path: $0.key, interfaces: $0.value) }.sorted { Self.order($0.path, $1.path) }
    }

    /// The modem an SMS goes through: one with the Messaging interface, a registered one before
    /// one that is not (Create would work on it, Send would then fail for want of a network).
    func messagingModem() -> ModemInfo? {
        let candidates = modems.filter(\.canSendSMS)
        return candidates.first(where: \.state.isRegistered) ?? candidates.first
    }

    /// The modem a voice call goes through: one with the Voice interface, a registered one first.
    func voiceModem() -> ModemInfo? {
        let candidates = modems.filter(\.canCall)
        return candidates.first(where: \.state.isRegistered) ?? candidates.first
    }

    /// By the number at the end of the path (Modem/10 after Modem/9), then by the path.
    private static func order(_ lhs: String, _ rhs: String) -> Bool {
        let left = Int(lhs.split(separator: "/").last ?? "")
        let right = Int(rhs.split(separator: "/").last ?? "")
        if let left, let right, left != right { return left < right }
        return lhs < rhs
    }
}
