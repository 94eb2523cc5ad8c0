import Systemd

/// One modem as ModemManager describes it, for a status command and for choosing where an SMS goes.
public struct ModemInfo: Sendable, Equatable, CustomStringConvertible {
    /// `/org/freedesktop/ModemManager1/Modem/0`; the number changes when the modem is plugged in again.
    public var path: String
    public var manufacturer: String
    public var model: String
    public var revision: String
    /// The IMEI on 3GPP modems.
    public var equipmentIdentifier: String
    public var state: ModemState
    /// Percent, of the dominant access technology.
    public var signalQuality: Int
    /// Whether `signalQuality` was measured recently.
    public var signalRecent: Bool
    /// MMModemAccessTechnology bits (0 when not registered).
    public var accessTechnologies: UInt32
    public var ownNumbers: [String]
    /// Has the Messaging interface: can create and send SMS.
    public var canSendSMS: Bool
    /// Has the Voice interface: can place calls.
    public var canCall: Bool

    public init(path: String, manufacturer: String, model: String, revision: String, equipmentIdentifier: String,
                state: ModemState, signalQuality: Int, signalRecent: Bool, accessTechnologies: UInt32,
                ownNumbers: [String], canSendSMS: Bool, canCall: Bool = false) {
        self.path = path
        self.manufacturer = manufacturer
        self.model = model
        self.revision = revision
        self.equipmentIdentifier = equipmentIdentifier
        self.state = state
        self.signalQuality = signalQuality
        self.signalRecent = signalRecent
        self.accessTechnologies = accessTechnologies
        self.ownNumbers = ownNumbers
        self.canSendSMS = canSendSMS
        self.canCall = canCall
    }

    /// From one GetManagedObjects entry; nil when the object is not a modem.
    init?(path: String, interfaces: [String: [String: BusValue]]) {
        guard let modem = interfaces[ModemManagerNames.modem] else { return nil }
        var signal = 0
        var recent = false
        if case .structure(let fields) = modem["SignalQuality"]?.unwrapped, fields.count == 2 {
            signal = fields[0].integerValue ?? 0
            recent = fields[1].boolValue ?? false
        }
        self.init(
            path: path,
            manufacturer: modem["Manufacturer"]?.stringValue ?? "",
            model: modem["Model"]?.stringValue ?? "",
            revision: modem["Revision"]?.stringValue ?? "",
            equipmentIdentifier: modem["EquipmentIdentifier"]?.stringValue ?? "",
            state: ModemState(modemManagerValue: Int32(clamping: modem["State"]?.integerValue ?? 0)),
            signalQuality: signal,
            signalRecent: recent,
            accessTechnologies: UInt32(clamping: modem["AccessTechnologies"]?.integerValue ?? 0),
            ownNumbers: modem["OwnNumbers"]?.stringArrayValue ?? [],
            canSendSMS: interfaces[ModemManagerNames.messaging] != nil,
            canCall: interfaces[ModemManagerNames.voice] != nil)
    }

    /// The access technologies by name ("lte", "umts"…), as mmcli shows them.
    public var accessTechnologyNames: [String] {
        ModemManagerNames.accessTechnologies.filter { accessTechnologies & $0.bit != 0 }.map(\.name)
    }

    /// "Quectel EC25 (/org/freedesktop/ModemManager1/Modem/0): registered, lte, signal 74%"
    public var description: String {
        var parts = [state.description]
        let technologies = accessTechnologyNames
        if !technologies.isEmpty { parts.append(technologies.joined(separator: "/")) }
        parts.append("signal \(signalQuality)%")
        if !canSendSMS { parts.append("no SMS") }
        return "\(manufacturer) \(model) (\(path)): " + parts.joined(separator: ", ")
    }
}
