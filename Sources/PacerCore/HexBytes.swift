/// Bytes written as hex, the way people and tools show BLE values: "16 48 54 01 EC 02" (btmon),
/// "0x16 0x48 0x54" (bluetoothctl), "16:48:54", "16485401EC02", upper or lower case. Groups are
/// separated by spaces, tabs, colons, dashes or commas; each group may start with 0x and must
/// hold whole bytes (an even number of digits), read in order.
public enum HexBytes {
    public static func parse(_ text: some StringProtocol) -> Result<[UInt8], HexBytesError> {
        var bytes: [UInt8] = []
        for group in String(text).split(whereSeparator: { separators.contains($0) }) {
            var digits = group[...]
            if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
            guard !digits.isEmpty else { return .failure(.emptyGroup(String(group))) }
            var high: UInt8?
            for character in digits {
                guard character.isASCII, let value = character.hexDigitValue.map(UInt8.init) else {
                    return .failure(.notHex(String(group), String(character)))
                }
                if let h = high {
                    bytes.append(h << 4 | value)
                    high = nil
                } else {
                    high = value
                }
            }
            guard high == nil else { return .failure(.oddDigits(String(group))) }
        }
        return .success(bytes)
    }

    /// Upper-case hex without separators, as Pacer writes it (`"16485401EC02"`).
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            text.unicodeScalars.append(upper[Int(byte >> 4)])
            text.unicodeScalars.append(upper[Int(byte & 0x0F)])
        }
        return text
    }

    private static let separators: Set<Character> = [" ", "\t", "\n", "\r", "\r\n", ":", "-", ","]
    private static let upper = Array("0123456789ABCDEF".unicodeScalars)
}
