/// Why a voice call could not be placed or hung up, worded for the journal.
public enum CallError: Error, Sendable, Equatable, CustomStringConvertible {
    case busUnavailable(String)
    case busClosed
    case modemManagerNotRunning
    /// ModemManager runs but has no modem with the Voice interface.
    case noVoiceModem
    case queryFailed(name: String, message: String)
    /// Voice.CreateCall failed.
    case createFailed(name: String, message: String)
    /// Call.Start failed (no network, the number refused).
    case startFailed(name: String, message: String)
    case hangupFailed(name: String, message: String)
    case timedOut(Duration)

    /// The bus-level failures `Deadline` maps (shared with SMS); the rest as `failure`.
    init(_ error: SMSError, failure: (String, String) -> CallError) {
        switch error {
        case .busUnavailable(let why): self = .busUnavailable(why)
        case .busClosed: self = .busClosed
        case .modemManagerNotRunning: self = .modemManagerNotRunning
        case .timedOut(let limit): self = .timedOut(limit)
        case .queryFailed(let name, let message), .createFailed(let name, let message), .sendFailed(let name, let message):
            self = failure(name, message)
        case .noModem, .notSent: self = failure("pacer.Call.Unexpected", "\(error)")
        }
    }

    public var description: String {
        switch self {
        case .busUnavailable(let why): "cannot connect to the system bus: \(why)"
        case .busClosed: "the system bus connection closed"
        case .modemManagerNotRunning: "ModemManager is not running (nobody owns \(ModemManagerNames.service))"
        case .noVoiceModem: "ModemManager has no modem that can place voice calls"
        case .queryFailed(let name, let message): "ModemManager did not answer as expected: \(SMSError.error(name, message))"
        case .createFailed(let name, let message): "ModemManager could not create the call: \(SMSError.error(name, message))"
        case .startFailed(let name, let message): "the modem could not start the call: \(SMSError.error(name, message))"
        case .hangupFailed(let name, let message): "the modem could not hang up: \(SMSError.error(name, message))"
        case .timedOut(let limit): "no answer from ModemManager within \(limit)"
        }
    }
}
