import PacerCore

/// The connection to gpsd, as the live client reports it.
public enum GPSLink: Sendable, Equatable {
    case connecting
    case connected
    case lost(reason: String)
}

/// What the status line says of GPS: the link to gpsd, and the newest fix while it is fresh.
public struct GPSStatus: Sendable, Equatable {
    /// A fix older than this no longer counts for the status line.
    public static let fixStaleNs: UInt64 = 5_000_000_000

    public private(set) var link: GPSLink = .connecting
    private var lastFixMode: GPSFix.Mode = .notSeen
    private var lastFixNs: UInt64?

    public init() {}

    /// A new link state; the journal's words for it, when it changed and is worth saying.
    /// `server` is gpsd's host:port and `runID` the run recording, if any.
    public mutating func linkChanged(to newLink: GPSLink, server: String, runID: Int64?) -> SessionNote? {
        guard newLink != link else { return nil }
        link = newLink
        switch newLink {
        case .connected: return SessionNote(.info, "gps", "connected to gpsd at \(server)")
        case .lost(let reason): return SessionNote(.warning, "gps", "lost gpsd at \(server) (\(reason)); reconnecting", runID: runID)
        case .connecting: return nil
        }
    }

    /// A fix's mode, and CLOCK_MONOTONIC of its receipt when it was a timed 2D or 3D fix.
    public mutating func fix(mode: GPSFix.Mode, timedFixAtNs: UInt64?) {
        if let timedFixAtNs { lastFixNs = timedFixAtNs }
        lastFixMode = mode
    }

    public func state(nowNs: UInt64) -> DaemonStatus.GPSState {
        switch link {
        case .connecting, .lost: return .gpsdUnreachable
        case .connected:
            let fresh = lastFixNs.map { nowNs &- $0 < Self.fixStaleNs } ?? false
            return !fresh ? .noFix : lastFixMode == .threeD ? .fix3D : lastFixMode == .twoD ? .fix2D : .noFix
        }
    }
}
