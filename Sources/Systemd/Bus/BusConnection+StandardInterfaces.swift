/// org.freedesktop.DBus.Properties and ObjectManager, which every BlueZ-style service speaks.
extension BusConnection {
    /// Interfaces and their properties, per object path.
    public typealias ManagedObjects = [String: [String: [String: BusValue]]]

    public func managedObjects(service: String, path: String = "/", timeout: Duration? = nil) async throws(BusError) -> ManagedObjects {
        let reply = try await call(BusMethodCall(destination: service, path: path, interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects"), timeout: timeout)
        guard let objects = reply.first?.dictionaryValue else {
            throw BusError(name: "pacer.Bus.UnexpectedReply", message: "GetManagedObjects from \(service) did not return a{oa{sa{sv}}}")
        }
        var result: ManagedObjects = [:]
        for (objectPath, interfaces) in objects {
            var byInterface: [String: [String: BusValue]] = [:]
            for (interface, properties) in interfaces.dictionaryValue ?? [:] {
                byInterface[interface] = properties.dictionaryValue ?? [:]
            }
            result[objectPath] = byInterface
        }
        return result
    }

    public func property(service: String, path: String, interface: String, name: String, timeout: Duration? = nil) async throws(BusError) -> BusValue {
        let reply = try await call(BusMethodCall(destination: service, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                                                 arguments: [.string(interface), .string(name)]), timeout: timeout)
        guard let value = reply.first else {
            throw BusError(name: "pacer.Bus.UnexpectedReply", message: "Properties.Get \(interface).\(name) returned nothing")
        }
        return value.unwrapped
    }

    public func setProperty(service: String, path: String, interface: String, name: String, value: BusValue, timeout: Duration? = nil) async throws(BusError) {
        _ = try await call(BusMethodCall(destination: service, path: path, interface: "org.freedesktop.DBus.Properties", member: "Set",
                                         arguments: [.string(interface), .string(name), .variant(value)]), timeout: timeout)
    }

    /// The unique name owning `name` right now, or nil when nobody does.
    public func nameOwner(_ name: String) async throws(BusError) -> String? {
        do {
            let reply = try await call(BusMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetNameOwner", arguments: [.string(name)]))
            return reply.first?.stringValue
        } catch where error.isServiceUnknown {
            return nil
        }
    }
}

/// A PropertiesChanged signal taken apart.
public struct PropertiesChange: Sendable, Equatable {
    public var path: String
    public var interface: String
    public var changed: [String: BusValue]
    public var invalidated: [String]

    public init?(_ signal: BusSignal) {
        guard signal.interface == "org.freedesktop.DBus.Properties", signal.member == "PropertiesChanged",
              signal.arguments.count == 3, let interface = signal.arguments[0].stringValue,
              let changed = signal.arguments[1].dictionaryValue else { return nil }
        path = signal.path
        self.interface = interface
        self.changed = changed
        invalidated = signal.arguments[2].stringArrayValue ?? []
    }
}
