/// Names and values from ModemManager's D-Bus API (introspection/org.freedesktop.ModemManager1.*.xml
/// and include/ModemManager-enums.h, 1.20).
enum ModemManagerNames {
    static let service = "org.freedesktop.ModemManager1"
    /// The manager object; it is also the ObjectManager that lists the modems.
    static let managerPath = "/org/freedesktop/ModemManager1"
    static let modem = "org.freedesktop.ModemManager1.Modem"
    static let messaging = "org.freedesktop.ModemManager1.Modem.Messaging"
    static let sms = "org.freedesktop.ModemManager1.Sms"
    static let voice = "org.freedesktop.ModemManager1.Modem.Voice"
    static let call = "org.freedesktop.ModemManager1.Call"
    static let properties = "org.freedesktop.DBus.Properties"

    /// MMSmsState.
    static let smsStateNames = ["unknown", "stored", "receiving", "received", "sending", "sent"]
    static let smsStateSent: UInt32 = 5
    /// MMSmsPduType of a status report.
    static let smsPduTypeStatusReport = 3

    /// MMModemAccessTechnology bits, by the names mmcli shows.
    static let accessTechnologies: [(bit: UInt32, name: String)] = [
        (1 << 0, "pots"), (1 << 1, "gsm"), (1 << 2, "gsm-compact"), (1 << 3, "gprs"), (1 << 4, "edge"),
        (1 << 5, "umts"), (1 << 6, "hsdpa"), (1 << 7, "hsupa"), (1 << 8, "hspa"), (1 << 9, "hspa-plus"),
        (1 << 10, "1xrtt"), (1 << 11, "evdo0"), (1 << 12, "evdoa"), (1 << 13, "evdob"), (1 << 14, "lte"),
        (1 << 15, "5gnr"), (1 << 16, "lte-cat-m"), (1 << 17, "lte-nb-iot"),
    ]
}
