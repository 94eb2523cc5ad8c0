/// One assignment of the sd_notify(3) protocol. Several go into one datagram, one per line.
public enum ServiceState: Sendable, Equatable {
    /// Start-up (or a reload) is finished.
    case ready
    /// A line for `systemctl status`. Newlines become spaces: each line of a datagram is a
    /// separate assignment, so a newline would let the text forge one (`…\nREADY=1`).
    case status(String)
    /// Keep-alive for WatchdogSec=.
    case watchdog
    /// Shutdown has begun.
    case stopping
    /// A reload has begun; `.ready` ends it. `monotonicMicroseconds` is CLOCK_MONOTONIC when it
    /// began: systemd ≥ 253 requires it with RELOADING=1 (Type=notify-reload), and 252 ignores it.
    case reloading(monotonicMicroseconds: UInt64)

    var assignment: String {
        switch self {
        case .ready: "READY=1"
        case .status(let text): "STATUS=" + Self.singleLine(text)
        case .watchdog: "WATCHDOG=1"
        case .stopping: "STOPPING=1"
        case .reloading(let usec): "RELOADING=1\nMONOTONIC_USEC=\(usec)"
        }
    }

    /// The datagram sd_notify sends for these states, in order.
    static func datagram(_ states: [ServiceState]) -> String {
        states.map(\.assignment).joined(separator: "\n")
    }

    private static func singleLine(_ text: String) -> String {
        String(text.map { $0.isNewline || $0 == "\0" ? " " : $0 })
    }
}
