/// One HTTP request as `HTTPClient.perform` sends it.
public struct HTTPRequest: Sendable {
    /// "GET", "POST", "PUT", …; sent as it is (an HTTP token: letters, digits, `!#$%&'*+-.^_|~`).
    public var method: String
    /// An absolute http:// or https:// URL.
    public var url: String
    /// Sent in this order, after libcurl's own Host (and Content-Length with a body). A name
    /// given here replaces libcurl's header of that name (Accept, User-Agent). Without a
    /// Content-Type none is sent (libcurl would otherwise claim a form).
    public var headers: [(String, String)]
    /// Sent with a Content-Length, as one piece; empty sends no body (unless the method is
    /// POST, PUT or PATCH, which send `Content-Length: 0`).
    public var body: [UInt8]
    /// The whole request, from the first DNS lookup to the last byte of the response.
    public var timeout: Duration
    /// Resolving and connecting, including the TLS handshake; nil: only `timeout` limits it.
    public var connectTimeout: Duration?

    public init(
        method: String = "GET",
        url: String,
        headers: [(String, String)] = [],
        body: [UInt8] = [],
        timeout: Duration = .seconds(30),
        connectTimeout: Duration? = .seconds(10)
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectTimeout = connectTimeout
    }
}
