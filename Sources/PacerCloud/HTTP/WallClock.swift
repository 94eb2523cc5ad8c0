import Foundation

/// The server's own clock: when a message was received, when a retry is due.
enum WallClock {
    static func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
