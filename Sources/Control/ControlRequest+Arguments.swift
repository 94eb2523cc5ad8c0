/// Typed access to arguments. A missing required argument, a wrong type or a value out of range
/// throws `bad_request` with a message that names the argument, what was expected and what came.
/// An argument given as null counts as absent.
extension ControlRequest {
    public func int(_ name: String, in range: ClosedRange<Int>? = nil) throws(ControlError) -> Int {
        guard let value = try optionalInt(name, in: range) else { throw missing(name, "an integer") }
        return value
    }

    public func int(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>? = nil) throws(ControlError) -> Int {
        try optionalInt(name, in: range) ?? defaultValue
    }

    public func optionalInt(_ name: String, in range: ClosedRange<Int>? = nil) throws(ControlError) -> Int? {
        guard let value = present(name) else { return nil }
        guard let integer = value.intValue else {
            throw mistyped(name, "an integer", value)
        }
        if let range, !range.contains(integer) {
            throw .badRequest("\(command): argument \"\(name)\" must be between \(range.lowerBound) and \(range.upperBound), got \(integer)")
        }
        return integer
    }

    public func double(_ name: String) throws(ControlError) -> Double {
        guard let value = try optionalDouble(name) else { throw missing(name, "a number") }
        return value
    }

    public func optionalDouble(_ name: String) throws(ControlError) -> Double? {
        guard let value = present(name) else { return nil }
        guard let number = value.doubleValue else { throw mistyped(name, "a number", value) }
        return number
    }

    public func string(_ name: String, oneOf allowed: [String]? = nil) throws(ControlError) -> String {
        guard let value = try optionalString(name, oneOf: allowed) else {
            throw missing(name, allowed.map(Self.choices) ?? "a string")
        }
        return value
    }

    public func string(_ name: String, default defaultValue: String, oneOf allowed: [String]? = nil) throws(ControlError) -> String {
        try optionalString(name, oneOf: allowed) ?? defaultValue
    }

    public func optionalString(_ name: String, oneOf allowed: [String]? = nil) throws(ControlError) -> String? {
        guard let value = present(name) else { return nil }
        guard let string = value.stringValue else {
            throw mistyped(name, allowed.map(Self.choices) ?? "a string", value)
        }
        if let allowed, !allowed.contains(string) {
            throw .badRequest("\(command): argument \"\(name)\" must be \(Self.choices(allowed)), got \"\(string)\"")
        }
        return string
    }

    public func bool(_ name: String) throws(ControlError) -> Bool {
        guard let value = try optionalBool(name) else { throw missing(name, "true or false") }
        return value
    }

    public func bool(_ name: String, default defaultValue: Bool) throws(ControlError) -> Bool {
        try optionalBool(name) ?? defaultValue
    }

    public func optionalBool(_ name: String) throws(ControlError) -> Bool? {
        guard let value = present(name) else { return nil }
        guard let bool = value.boolValue else { throw mistyped(name, "true or false", value) }
        return bool
    }

    private func present(_ name: String) -> JSONValue? {
        guard let value = arguments[name], value != .null else { return nil }
        return value
    }

    private func missing(_ name: String, _ expected: String) -> ControlError {
        .badRequest("\(command): missing argument \"\(name)\" (\(expected))")
    }

    private func mistyped(_ name: String, _ expected: String, _ value: JSONValue) -> ControlError {
        let shown: String
        switch value {
        case .number, .bool: shown = "\(value.kindDescription) (\(value.serialized()))"
        case .string(let text): shown = "a string (\"\(text.count > 40 ? text.prefix(40) + "…" : text)\")"
        default: shown = value.kindDescription
        }
        return .badRequest("\(command): argument \"\(name)\" must be \(expected), got \(shown)")
    }

    private static func choices(_ allowed: [String]) -> String {
        let quoted = allowed.map { "\"\($0)\"" }
        guard quoted.count > 1 else { return quoted.joined() }
        return "one of " + quoted.dropLast().joined(separator: ", ") + " or " + quoted[quoted.count - 1]
    }
}
