/// A Bluetooth device address, `AA:BB:CC:DD:EE:FF`, upper case as BlueZ writes it.
public struct StrapAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let text: String

    /// Accepts upper or lower case, with `:` or `-` or `_` between the six bytes.
    public init?(_ text: String) {
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == "-" || $0 == "_" })
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else { return nil }
        self.text = parts.map { $0.uppercased() }.joined(separator: ":")
    }

    /// BlueZ's object path for this device under `adapterPath`, e.g. `/org/bluez/hci0/dev_AA_BB_…`.
    public func devicePath(under adapterPath: String) -> String {
        adapterPath + "/dev_" + text.replacingColons()
    }

    public var description: String { text }
    public static func < (a: StrapAddress, b: StrapAddress) -> Bool { a.text < b.text }
}

extension String {
    fileprivate func replacingColons() -> String { String(map { $0 == ":" ? "_" : $0 }) }
}
