#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus call that failed: either the peer answered with an error (`name` such as
/// `org.bluez.Error.Failed`), or the local side could not send or wait (`name` is then
/// `System.Error.<errno name>` as sd-bus maps it, or `pacer.Bus.Closed`).
public struct BusError: Error, Sendable, Equatable, CustomStringConvertible {
    public let name: String
    public let message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// The connection was closed by us or lost; nothing was or will be answered.
    public static let closedName = "pacer.Bus.Closed"
    static func closed(_ why: String) -> BusError { BusError(name: closedName, message: why) }

    static func local(_ operation: String, returned: Int32) -> BusError {
        BusError(name: "pacer.Bus.LocalError", message: "\(operation): \(String(cString: strerror(-returned)))")
    }

    /// A call that could not be sent: a connection that is already lost (the peer reset it, or
    /// it is not connected any more) counts as closed, as it does once sd-bus has noticed.
    static func sending(_ operation: String, returned: Int32) -> BusError {
        switch -returned {
        case ECONNRESET, ENOTCONN, EPIPE, ESHUTDOWN: return .closed("\(operation): \(String(cString: strerror(-returned)))")
        default: return .local(operation, returned: returned)
        }
    }

    public var isClosed: Bool { name == Self.closedName }
    /// No answer within the call's timeout (sd-bus reports ETIMEDOUT this way).
    public var isTimeout: Bool { name == "org.freedesktop.DBus.Error.Timeout" || name == "org.freedesktop.DBus.Error.NoReply" }
    /// The destination name has no owner right now (the service is not running).
    public var isServiceUnknown: Bool { name == "org.freedesktop.DBus.Error.ServiceUnknown" || name == "org.freedesktop.DBus.Error.NameHasNoOwner" }
    public var isUnknownObject: Bool { name == "org.freedesktop.DBus.Error.UnknownObject" || name == "org.freedesktop.DBus.Error.UnknownMethod" }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }
}
