/// A problem in a config file, located precisely enough for an operator to fix it blind:
/// `/etc/pacer/pacer.toml:12: tracking.split_distance_m: expected a number > 0, got "abc"`.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    /// Dotted key (`tracking.split_distance_m`), or nil for a line that is not a key at all.
    public var key: String?
    public var problem: String

    public init(file: String, line: Int, key: String?, problem: String) {
        self.file = file
        self.line = line
        self.key = key
        self.problem = problem
    }

    public var description: String {
        if let key { return "\(file):\(line): \(key): \(problem)" }
        return "\(file):\(line): \(problem)"
    }
}
