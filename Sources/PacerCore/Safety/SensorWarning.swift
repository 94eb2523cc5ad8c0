/// A sensor fault the watcher noticed (or saw end).
public struct SensorWarning: Sendable, Equatable {
    public var fault: SensorFault
    /// When it was noticed (raised) or seen to end (cleared).
    public var time: Timestamp
    /// Since when the signal was missing or stuck.
    public var since: Timestamp
    /// For `hr_signal_abnormal`: what is wrong with the signal.
    public var reason: AbnormalSignal?

    public init(fault: SensorFault, time: Timestamp, since: Timestamp, reason: AbnormalSignal? = nil) {
        self.fault = fault
        self.time = time
        self.since = since
        self.reason = reason
    }

    /// One line for replay's warnings and the journal.
    public var text: String {
        let seconds = Int(time.seconds(since: since).rounded())
        switch fault {
        case .noData: return "SOS monitoring: no heart-rate notification for \(seconds) s (strap off, out of range or disconnected)"
        case .noContact: return "SOS monitoring: the strap has had no skin contact for \(seconds) s"
        case .stale: return "SOS monitoring: the strap has repeated the same reading without beat intervals for \(seconds) s"
        case .noStrap: return "SOS monitoring: no heart-rate strap seen in the \(seconds) s since monitoring started"
        case .abnormal:
            let what = switch reason {
            case .noContact: "no skin contact"
            case .zero: "0 bpm"
            case .silent: "no notification"
            case .frozen: "the same reading repeated"
            case .implausible: "readings above 250 bpm"
            case .chaotic: "readings no heart rhythm produces"
            case nil: "abnormal"
            }
            return "SOS monitoring: the heart-rate signal is abnormal (\(what)) while you keep moving: check your heart-rate strap; no alert is raised while you move"
        case .insufficient: return "SOS monitoring: too few valid heart-rate readings to confirm an emergency within 5 s (strap too slow or losing contact)"
        }
    }
}
