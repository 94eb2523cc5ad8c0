/// Battery Level (BLE characteristic 0x2A19, Battery Service 0x180F): exactly one uint8, 0–100 %.
public enum BatteryLevel {
    /// The percentage, or why the value is not one. Never traps.
    public static func decode(_ bytes: some Collection<UInt8>) -> Result<Int, BatteryLevelError> {
        guard bytes.count == 1, let value = bytes.first else {
            return .failure(bytes.isEmpty ? .empty : .wrongLength(bytes.count))
        }
        // 101–255 are reserved; some apps show 255 %, the spec (and bluetooth-sig-python) reject it.
        guard value <= 100 else { return .failure(.reserved(value)) }
        return .success(Int(value))
    }
}
