/// A method call to send: who, where, what, with which arguments.
public struct BusMethodCall: Sendable, Equatable {
    public var destination: String
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [BusValue]

    public init(destination: String, path: String, interface: String, member: String, arguments: [BusValue] = []) {
        self.destination = destination
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// A signal as received.
public struct BusSignal: Sendable, Equatable {
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [BusValue]
    /// CLOCK_MONOTONIC when the bus thread read it: notifications carry no time of their own.
    public var receivedNs: UInt64

    public init(sender: String, path: String, interface: String, member: String, arguments: [BusValue], receivedNs: UInt64 = 0) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        self.receivedNs = receivedNs
    }
}

/// A D-Bus match rule (the dbus-daemon's syntax), built from its parts so values are quoted right.
public struct BusMatchRule: Sendable, Equatable, CustomStringConvertible {
    public var sender: String?
    public var path: String?
    /// Matches this path and everything under it.
    public var pathNamespace: String?
    public var interface: String?
    public var member: String?
    /// arg0 as a string (e.g. the interface name of PropertiesChanged, the bus name of NameOwnerChanged).
    public var arg0: String?

    public init(sender: String? = nil, path: String? = nil, pathNamespace: String? = nil, interface: String? = nil, member: String? = nil, arg0: String? = nil) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    public var description: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            // Match rules quote with ' and have no escape inside quotes: close, escape, reopen.
            if let value { parts.append("\(key)='\(value.replacingAll("'", with: #"'\''"#))'") }
        }
        add("sender", sender)
        add("path", path)
        add("path_namespace", pathNamespace)
        add("interface", interface)
        add("member", member)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
