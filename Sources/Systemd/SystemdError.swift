#if canImport(Glibc)
import Glibc
#endif

/// A libsystemd call failed; `code` is the errno it returned (as a positive number).
public struct SystemdError: Error, Equatable, Sendable, CustomStringConvertible {
    public let operation: String
    public let code: Int32

    public init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// libsystemd returns `-errno`.
    init(operation: String, returned: Int32) {
        self.init(operation: operation, code: -returned)
    }

    public var description: String {
        "\(operation): \(String(cString: strerror(code)))"
    }
}
