/// One request line, parsed: `{"id":3,"command":"runs.list","limit":20,"offset":0}`.
///
/// Every member other than `id` and `command` is an argument; read them with the typed
/// accessors (`try request.int("run")`), which throw a `bad_request` naming the argument.
public struct ControlRequest: Sendable, Hashable {
    /// Echoed in every reply line: a number, a string, or null when the request had none.
    public var id: JSONValue
    /// Dotted lower-case names: `status`, `run.start`, `runs.export`.
    public var command: String
    public var arguments: [String: JSONValue]
    /// Who sent it (for logs: "run started by uid 1000").
    public var peer: ControlPeer

    public init(
        id: JSONValue = .null, command: String, arguments: [String: JSONValue] = [:],
        peer: ControlPeer = ControlPeer(pid: 0, uid: 0, gid: 0)
    ) {
        self.id = id
        self.command = command
        self.arguments = arguments
        self.peer = peer
    }

    /// A request line without its newline, or the error reply it deserves (with the id when one
    /// could be read, null otherwise).
    static func parse(line: ArraySlice<UInt8>, peer: ControlPeer) -> Result<ControlRequest, Rejection> {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: line)
        } catch {
            return .failure(Rejection(id: .null, error: .badRequest(error.description)))
        }
        guard case .object(var members) = value else {
            return .failure(Rejection(id: .null, error: .badRequest("a request must be a JSON object, not \(value.kindDescription)")))
        }
        let id = members.removeValue(forKey: "id") ?? .null
        switch id {
        case .null, .number, .string: break
        default:
            return .failure(Rejection(id: .null, error: .badRequest("\"id\" must be a number, a string or null, not \(id.kindDescription)")))
        }
        guard let commandValue = members.removeValue(forKey: "command") else {
            return .failure(Rejection(id: id, error: .badRequest("missing \"command\" (a string such as \"status\")")))
        }
        guard case .string(let command) = commandValue, !command.isEmpty else {
            return .failure(Rejection(id: id, error: .badRequest("\"command\" must be a non-empty string, not \(commandValue.kindDescription)")))
        }
        return .success(ControlRequest(id: id, command: command, arguments: members, peer: peer))
    }

    struct Rejection: Error, Equatable {
        let id: JSONValue
        let error: ControlError
    }
}
