/// Why a request got no response. The descriptions are written for the journal: they name the
/// host and, where libcurl gave one, keep its own explanation (its error buffer) as the detail.
/// An HTTP error status (4xx, 5xx) is not one of these: it is a response.
public enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not an absolute http:// or https:// URL libcurl can parse.
    case invalidURL(String)
    /// A method that is not an HTTP token, or a header name or value that would break the
    /// request (CR, LF, NUL, a colon in a name): refused before anything is sent.
    case invalidRequest(String)
    /// DNS gave no address for the host (no network, no DNS server, or a misspelt name).
    case couldNotResolve(host: String)
    /// No TCP connection: refused (nothing listens), unreachable network, no route.
    case couldNotConnect(host: String, port: Int, detail: String)
    /// The TLS handshake failed: the server's certificate is not trusted by the configured CA,
    /// names another host, has expired; or no common protocol version or cipher.
    case tls(String)
    /// The request was not answered within `after`: the request's `timeout`, or its
    /// `connectTimeout` when the connection (TCP and TLS) was not even established.
    case timedOut(after: Duration, detail: String)
    case sendFailed(String)
    /// The connection broke or the server sent something that is not HTTP, before the
    /// response was complete.
    case receiveFailed(String)
    /// The response body is larger than `HTTPClient.Configuration.maxResponseBytes`; the
    /// transfer was abandoned.
    case tooLarge(limit: Int)
    /// The calling task was cancelled; the transfer was abandoned.
    case cancelled
    /// No thread for the transfer (the process is out of threads or memory).
    case cannotStartThread(String)
    /// Any other libcurl failure: its CURLcode and message.
    case other(code: Int, message: String)

    public var description: String {
        switch self {
        case .invalidURL(let url):
            "invalid URL (not an absolute http:// or https:// URL): \(url)"
        case .invalidRequest(let reason):
            "invalid request: \(reason)"
        case .couldNotResolve(let host):
            "cannot resolve host '\(host)' (no network or no DNS?)"
        case .couldNotConnect(let host, let port, let detail):
            "cannot connect to \(host) port \(port): \(detail)"
        case .tls(let detail):
            "TLS handshake failed (certificate not trusted or not for this host?): \(detail)"
        case .timedOut(let after, let detail):
            "no response within \(after): \(detail)"
        case .sendFailed(let detail):
            "sending the request failed: \(detail)"
        case .receiveFailed(let detail):
            "receiving the response failed: \(detail)"
        case .tooLarge(let limit):
            "response body larger than the limit of \(limit) bytes; abandoned"
        case .cancelled:
            "request cancelled"
        case .cannotStartThread(let detail):
            "no thread for the request: \(detail)"
        case .other(let code, let message):
            "libcurl error \(code): \(message)"
        }
    }
}
