import PacerCore

/// Times on the wire (openapi.yaml `Time`): ISO-8601 with seconds, an optional fraction and `Z`
/// or an offset; written as `2026-05-10T07:30:00.000Z`. Parsed and printed by PacerCore's
/// `Timestamp`, the one implementation on both ends.
public enum WireTime {
    /// 1980-01-01T00:00:00Z: the GPS epoch's decade; earlier is a clock that was never set.
    public static let earliestMs: Int64 = 315_532_800_000
    /// 2200-01-01T00:00:00Z: far beyond any real clock, still four digits of year when printed.
    public static let latestMs: Int64 = 7_258_118_400_000
    /// What the cloud takes as a time (alerts excepted: they are never refused for a time).
    public static let range = earliestMs...latestMs

    /// Milliseconds since the epoch, or nil for anything but the format above (any year).
    public static func milliseconds(_ text: String) -> Int64? {
        Timestamp.milliseconds(iso8601: text, allowingOffset: true)
    }

    /// `2026-05-10T07:30:00.000Z`; clamped to the years 0001...9999, all the format can print.
    public static func text(milliseconds: Int64) -> String {
        Timestamp(milliseconds: min(max(milliseconds, -62_135_596_800_000), 253_402_300_799_999)).iso8601
    }
}
