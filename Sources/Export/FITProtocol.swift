import PacerCore

/// The parts of the FIT protocol (Garmin's Flexible and Interoperable data Transfer, the FIT
/// SDK's "FIT Protocol" document) that Pacer's writer and the cloud's FIT import share.
public enum FITProtocol {
    /// FIT times count seconds from 1989-12-31T00:00:00Z: this many seconds after the Unix epoch.
    public static let epochOffsetSeconds: Int64 = 631_065_600
    /// The ".FIT" signature at bytes 8…11 of the file header.
    public static let signature: [UInt8] = Array(".FIT".utf8)

    /// Degrees to semicircles (2^31 semicircles are 180°), rounded; +180° longitude, one step past
    /// Int32, is written as −180° (the same meridian).
    public static func semicircles(_ degrees: Double) -> Int32 {
        let value = (degrees * 2_147_483_648.0 / 180.0).rounded(.toNearestOrAwayFromZero)
        if value >= 2_147_483_648.0 { return Int32.min }
        return Int32(max(value, -2_147_483_648.0))
    }

    public static func degrees(_ semicircles: Int32) -> Double {
        Double(semicircles) * 180.0 / 2_147_483_648.0
    }

    /// The FIT SDK's CRC-16 (polynomial 0xA001, nibble table), continued from `crc` over `bytes`.
    public static func crc<Bytes: Sequence<UInt8>>(_ bytes: Bytes, continuing crc: UInt16 = 0) -> UInt16 {
        var crc = crc
        for byte in bytes {
            var tmp = crcTable[Int(crc & 0xF)]
            crc = (crc >> 4) & 0x0FFF
            crc = crc ^ tmp ^ crcTable[Int(byte & 0xF)]
            tmp = crcTable[Int(crc & 0xF)]
            crc = (crc >> 4) & 0x0FFF
            crc = crc ^ tmp ^ crcTable[Int((byte >> 4) & 0xF)]
        }
        return crc
    }

    private static let crcTable: [UInt16] = [
        0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
        0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400,
    ]

    /// Global message numbers (the SDK's Profile.xlsx, `mesg_num`).
    public enum Message {
        public static let fileID: UInt16 = 0
        public static let session: UInt16 = 18
        public static let lap: UInt16 = 19
        public static let record: UInt16 = 20
        public static let event: UInt16 = 21
        public static let activity: UInt16 = 34
    }

    /// Field numbers of the `record` message.
    public enum RecordField {
        public static let positionLat: UInt8 = 0
        public static let positionLong: UInt8 = 1
        public static let altitude: UInt8 = 2
        public static let heartRate: UInt8 = 3
        public static let distance: UInt8 = 5
        public static let speed: UInt8 = 6
        public static let timestamp: UInt8 = 253
    }

    /// Base types: the byte a field definition carries, its size and its "invalid" value.
    public enum BaseType: UInt8, Sendable {
        case enumeration = 0x00, sint8 = 0x01, uint8 = 0x02, sint16 = 0x83, uint16 = 0x84, sint32 = 0x85, uint32 = 0x86
        case string = 0x07, uint8z = 0x0A, uint16z = 0x8B, uint32z = 0x8C, byte = 0x0D

        public var size: Int {
            switch self {
            case .enumeration, .sint8, .uint8, .string, .uint8z, .byte: 1
            case .sint16, .uint16, .uint16z: 2
            case .sint32, .uint32, .uint32z: 4
            }
        }

        /// All bits of the invalid value, in the field's size.
        public var invalid: UInt64 {
            switch self {
            case .enumeration, .uint8, .byte: 0xFF
            case .sint8: 0x7F
            case .sint16: 0x7FFF
            case .uint16: 0xFFFF
            case .sint32: 0x7FFF_FFFF
            case .uint32: 0xFFFF_FFFF
            case .string, .uint8z, .uint16z, .uint32z: 0
            }
        }
    }

    /// A FIT time (seconds since the FIT epoch) for `time`, rounded down to the second; 0 (the
    /// FIT epoch) for a time before it, the last valid value (0xFFFFFFFF means "none") past 2126.
    static func time(_ time: Timestamp) -> UInt32 {
        let seconds = time.milliseconds >= 0 ? time.milliseconds / 1000 : (time.milliseconds - 999) / 1000
        return min(UInt32(clamping: seconds - epochOffsetSeconds), 0xFFFF_FFFE)
    }
}
