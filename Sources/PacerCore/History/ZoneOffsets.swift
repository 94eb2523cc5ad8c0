/// A time zone's offsets from UTC, from the tz database's compiled form (TZif, RFC 8536: the
/// files under /usr/share/zoneinfo). The device needs them for "today" in the account's zone,
/// and FoundationEssentials (all pacerd links) knows no named zones.
///
/// Only the transition table is used, not the footer's rule for instants after the last
/// transition: Debian's zone files are built "fat", with transitions listed up to 2037.
public struct ZoneOffsets: Sendable, Equatable {
    /// Seconds since 1970 at which a new offset begins, ascending.
    let transitions: [Int64]
    /// The offset (seconds east of UTC) from each transition on.
    let offsets: [Int32]
    /// Before the first transition (time type 0, as RFC 8536 says).
    let initial: Int32

    public static let utc = ZoneOffsets(transitions: [], offsets: [], initial: 0)

    init(transitions: [Int64], offsets: [Int32], initial: Int32) {
        self.transitions = transitions
        self.offsets = offsets
        self.initial = initial
    }

    /// Parses a TZif file (version 1, or the 64-bit block of versions 2 to 4); nil when the
    /// bytes are not one.
    public init?(tzif bytes: [UInt8]) {
        guard let first = Self.block(bytes, at: 0, timeSize: 4) else { return nil }
        guard bytes[4] >= 0x32 else {
            self = first.zone
            return
        }
        // A file that says it has the 64-bit block and lacks it is cut short.
        guard let second = Self.block(bytes, at: first.end, timeSize: 8) else { return nil }
        self = second.zone
    }

    /// The offset from UTC in force at `epochSeconds`.
    public func secondsFromUTC(atEpochSeconds epochSeconds: Int64) -> Int {
        // The last transition at or before the instant.
        var low = 0
        var high = transitions.count
        while low < high {
            let middle = (low + high) / 2
            if transitions[middle] <= epochSeconds { low = middle + 1 } else { high = middle }
        }
        return Int(low == 0 ? initial : offsets[low - 1])
    }

    public func secondsFromUTC(at instant: Timestamp) -> Int {
        secondsFromUTC(atEpochSeconds: instant.milliseconds.floorDivided(by: 1000))
    }

    private static func block(_ bytes: [UInt8], at start: Int, timeSize: Int) -> (zone: ZoneOffsets, end: Int)? {
        guard start + 44 <= bytes.count, bytes[start] == 0x54, bytes[start + 1] == 0x5A, bytes[start + 2] == 0x69, bytes[start + 3] == 0x66 else {
            return nil
        }
        func count(_ index: Int) -> Int { Int(integer(bytes, at: start + 20 + 4 * index, size: 4)) }
        let (isUTCCount, isStdCount, leapCount, timeCount, typeCount, charCount) = (count(0), count(1), count(2), count(3), count(4), count(5))
        guard typeCount > 0, timeCount >= 0, [isUTCCount, isStdCount, leapCount, charCount].allSatisfy({ $0 >= 0 }) else { return nil }
        let times = start + 44
        let indices = times + timeCount * timeSize
        let types = indices + timeCount
        let end = types + typeCount * 6 + charCount + leapCount * (timeSize + 4) + isStdCount + isUTCCount
        guard end <= bytes.count else { return nil }
        var offsets: [Int32] = []
        for index in 0..<typeCount { offsets.append(Int32(truncatingIfNeeded: integer(bytes, at: types + 6 * index, size: 4))) }
        var transitions: [Int64] = []
        var transitionOffsets: [Int32] = []
        for index in 0..<timeCount {
            let type = Int(bytes[indices + index])
            guard type < typeCount else { return nil }
            let time = integer(bytes, at: times + timeSize * index, size: timeSize)
            guard transitions.last.map({ $0 < time }) ?? true else { return nil }
            transitions.append(time)
            transitionOffsets.append(offsets[type])
        }
        return (ZoneOffsets(transitions: transitions, offsets: transitionOffsets, initial: offsets[0]), end)
    }

    /// A big-endian signed integer of 4 or 8 bytes.
    private static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> Int64 {
        var value: UInt64 = 0
        for byte in bytes[offset..<offset + size] { value = value << 8 | UInt64(byte) }
        return size == 4 ? Int64(Int32(truncatingIfNeeded: value)) : Int64(bitPattern: value)
    }
}
