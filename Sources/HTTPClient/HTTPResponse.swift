/// A response, whatever its status: a 503 is an answer, not an error.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// The final response's headers in the order received (no status line); names as sent.
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first header named `name`, compared without regard to case.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.0.lowercased() == wanted }?.1
    }

    /// 200–299.
    public var isSuccess: Bool { (200..<300).contains(status) }
}
