/// Why a message did not go out (or the modems could not be listed), worded for the journal.
public enum SMSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection to the system bus could be made.
    case busUnavailable(String)
    /// The bus connection ended during the operation.
    case busClosed
    /// Nobody owns org.freedesktop.ModemManager1.
    case modemManagerNotRunning
    /// ModemManager runs but has no modem with the Messaging interface.
    case noModem
    /// ModemManager answered a query (the modem list, the message's state) with an error or
    /// with something unexpected.
    case queryFailed(name: String, message: String)
    /// Messaging.Create failed, e.g. `org.freedesktop.ModemManager1.Error.Core.WrongState` for a
    /// modem that is not enabled.
    case createFailed(name: String, message: String)
    /// Sms.Send failed: the modem or the network refused it, e.g.
    /// `org.freedesktop.ModemManager1.Error.Message.NetworkTimeout`.
    case sendFailed(name: String, message: String)
    /// No answer within the time allowed for the whole operation (given here). A Send that
    /// timed out may still complete later.
    case timedOut(Duration)
    /// Send returned but the message's State is not SENT (MMSmsState value).
    case notSent(state: UInt32)

    public var description: String {
        switch self {
        case .busUnavailable(let why): "cannot connect to the system bus: \(why)"
        case .busClosed: "the system bus connection closed"
        case .modemManagerNotRunning: "ModemManager is not running (nobody owns \(ModemManagerNames.service))"
        case .noModem: "ModemManager has no modem that can send SMS"
        case .queryFailed(let name, let message): "ModemManager did not answer as expected: \(Self.error(name, message))"
        case .createFailed(let name, let message): "ModemManager could not create the message: \(Self.error(name, message))"
        case .sendFailed(let name, let message): "the modem could not send the message: \(Self.error(name, message))"
        case .timedOut(let limit): "no answer from ModemManager within \(limit)"
        case .notSent(let state):
            "the message is \(ModemManagerNames.smsStateNames.indices.contains(Int(state)) ? ModemManagerNames.smsStateNames[Int(state)] : "in state \(state)"), not sent, after Send returned"
        }
    }

    /// "name: message", or the name alone; CallError words its errors the same way.
    static func error(_ name: String, _ message: String) -> String {
        message.isEmpty ? name : "\(name): \(message)"
    }
}
