import Glibc

/// `struct input_event` records as the kernel writes them (native layout: a timeval of two C
/// longs, then type, code, value).
enum InputEventRecords {
    static let synReport = record(type: 0, code: 0, value: 0)
    static let synDropped = record(type: 0, code: 3, value: 0)

    static func key(_ code: UInt16, _ value: Int32, seconds: Int = 0, microseconds: Int = 0) -> [UInt8] {
        record(type: 1, code: code, value: value, seconds: seconds, microseconds: microseconds)
    }

    static func record(type: UInt16, code: UInt16, value: Int32, seconds: Int = 0, microseconds: Int = 0) -> [UInt8] {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: seconds) { bytes += $0 }
        withUnsafeBytes(of: microseconds) { bytes += $0 }
        withUnsafeBytes(of: type) { bytes += $0 }
        withUnsafeBytes(of: code) { bytes += $0 }
        withUnsafeBytes(of: value) { bytes += $0 }
        return bytes
    }
}
