import ArgumentParser
import PacerCore
import PacerReplay

/// `pacerctl hr …`: heart-rate strap tools that need no daemon.
struct HRCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hr",
        abstract: "Heart-rate strap tools.",
        subcommands: [HRDecodeCommand.self]
    )
}

/// `pacerctl hr decode HEX [--battery] [--json]`: what Pacer makes of a value copied from btmon or
/// bluetoothctl, decoded by the same code the daemon uses.
struct HRDecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode a Heart Rate Measurement (0x2A37) or Battery Level (0x2A19) value.",
        discussion: """
            HEX is the value as btmon or bluetoothctl show it: "16 48 54 01 EC 02", "16485401EC02", \
            "0x16 0x48 0x54", "16:48:54", upper or lower case; it may also be given as several \
            arguments. A value that is not a valid measurement is reported (valid false, with the \
            reason) and is not an error; text that is not hex is.
            """
    )

    @Argument(help: ArgumentHelp("The value's bytes in hex.", valueName: "HEX"))
    var hex: [String]

    @Flag(help: "Decode as Battery Level (0x2A19) instead of Heart Rate Measurement (0x2A37).")
    var battery = false

    @Flag(help: "Print JSON with the field names of the shared hrm-vectors.json spec_decoding.")
    var json = false

    func validate() throws {
        if case .failure(let error) = bytes { throw ValidationError("HEX: \(error)") }
    }

    func run() throws {
        guard case .success(let bytes) = bytes else { return }  // validate() has reported it
        if battery {
            let result = BatteryLevel.decode(bytes)
            print(json ? Self.json(result, bytes: bytes) : Self.text(result))
        } else {
            let result = HeartRateMeasurement.decode(bytes)
            print(json ? Self.json(result, bytes: bytes) : Self.text(result))
        }
    }

    private var bytes: Result<[UInt8], HexBytesError> { HexBytes.parse(hex.joined(separator: " ")) }

    // MARK: JSON (field names as in hrm-vectors.json `spec_decoding`)

    static func json(_ result: Result<HeartRateMeasurement, HeartRateMeasurementError>, bytes: [UInt8]) -> String {
        var fields: [(String, String)] = []
        switch result {
        case .success(let m):
            fields = [
                ("valid", "true"),
                ("flags", quoted(flagsText(m.flags))),
                ("hr_format", quoted(m.isUInt16 ? "uint16" : "uint8")),
                ("heart_rate_bpm", String(m.bpm)),
                ("sensor_contact", quoted(m.contact.rawValue)),
                ("energy_expended_kj", m.energyExpendedKJ.map(String.init) ?? "null"),
                ("rr_intervals_raw_1_1024s", "[" + m.rrIntervalsRaw.map(String.init).joined(separator: ",") + "]"),
                // raw × 1000 / 1024 has at most 7 decimals and 12 significant digits, so Swift's
                // shortest round-trip form is the exact value (332.03125), never a rounding.
                ("rr_intervals_ms", "[" + m.rrIntervalsMs.map { "\($0)" }.joined(separator: ",") + "]"),
                ("trailing_bytes", String(m.trailingByteCount)),
                ("reserved_flag_bits_set", m.reservedFlagBits != 0 ? "true" : "false"),
            ]
        case .failure(let error):
            fields = [("valid", "false")]
            if let flags = bytes.first { fields.append(("flags", quoted(flagsText(flags)))) }
            fields.append(("reason", quoted(error.description)))
        }
        return object(fields)
    }

    static func json(_ result: Result<Int, BatteryLevelError>, bytes: [UInt8]) -> String {
        switch result {
        case .success(let percent):
            return object([("valid", "true"), ("battery_percent", String(percent))])
        case .failure(let error):
            var fields = [("valid", "false")]
            if bytes.count == 1 { fields.append(("battery_percent_raw", String(bytes[0]))) }
            fields.append(("reason", quoted(error.description)))
            return object(fields)
        }
    }

    private static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { quoted($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    private static func quoted(_ text: String) -> String {
        var w = JSONWriter(capacity: text.utf8.count + 2)
        w.string(nil, text)
        return w.output
    }

    private static func flagsText(_ flags: UInt8) -> String { "0x" + HexBytes.string([flags]) }

    // MARK: Text

    static func text(_ result: Result<HeartRateMeasurement, HeartRateMeasurementError>) -> String {
        switch result {
        case .success(let m):
            var parts = ["\(m.bpm) bpm"]
            switch m.contact {
            case .detected: parts.append("contact detected")
            case .notDetected: parts.append("contact not detected (not a heart reading)")
            case .notSupported: parts.append("contact not supported")
            }
            if let energy = m.energyExpendedKJ { parts.append("energy \(energy) kJ") }
            if !m.rrIntervalsMs.isEmpty {
                parts.append("RR " + m.rrIntervalsMs.map { JSONWriter.fixed($0, digits: 1) + " ms" }.joined(separator: " "))
            }
            if m.trailingByteCount > 0 {
                parts.append("\(m.trailingByteCount) trailing byte\(m.trailingByteCount == 1 ? "" : "s") ignored")
            }
            if m.reservedFlagBits != 0 { parts.append("reserved flag bits \(flagsText(m.reservedFlagBits)) ignored") }
            return parts.joined(separator: ", ")
        case .failure(let error):
            return "invalid: \(error)"
        }
    }

    static func text(_ result: Result<Int, BatteryLevelError>) -> String {
        switch result {
        case .success(let percent): "battery \(percent) %"
        case .failure(let error): "invalid: \(error)"
        }
    }
}
