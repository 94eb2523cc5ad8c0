import Crypto
import Foundation
import Hummingbird
import Logging

/// Where `/metrics` is served; neither set (the default): nowhere. Its counts say how busy the
/// service is and which routes fail, which is for the operator only.
public struct MetricsSettings: Sendable, Equatable {
    /// `serve --metrics-token-file`: `GET /metrics` on the main address, with
    /// `Authorization: Bearer TOKEN`; without it, or with another, 401.
    public var token: String?
    /// `serve --metrics-listen HOST:PORT`: a second listener that serves only `/metrics` (behind
    /// the token too when one is set), e.g. on 127.0.0.1 for a local Prometheus.
    public var listen: (host: String, port: Int)?

    public init(token: String? = nil, listen: (host: String, port: Int)? = nil) {
        self.token = token
        self.listen = listen
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.token == rhs.token && lhs.listen?.host == rhs.listen?.host && lhs.listen?.port == rhs.listen?.port
    }

    static let path = "/metrics"

    /// A token short enough to guess is refused at start-up.
    public static let minimumTokenLength = 16

    /// `HOST:PORT` or `[IPv6]:PORT`, or nil when it is neither.
    public static func parseListen(_ text: String) -> (host: String, port: Int)? {
        let host: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (1...65_535).contains(port) else { return nil }
        return (String(host), port)
    }
}

/// The `/metrics` answer, on the main router (behind the token) or on the metrics listener.
enum MetricsEndpoint {
    static func answer(_ request: Request, token: String?, metrics: CloudMetrics) -> Response {
        guard request.method == .get || request.method == .head else {
            return Response(status: .methodNotAllowed, headers: [.allow: "GET, HEAD", .contentType: "text/plain; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: "GET /metrics\n")))
        }
        if let token, !authorized(request.headers[.authorization], token: token) {
            return Response(status: .unauthorized,
                            headers: [.wwwAuthenticate: "Bearer realm=\"metrics\"", .contentType: "text/plain; charset=utf-8",
                                      .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(string: "401: /metrics needs Authorization: Bearer <the metrics token>\n")))
        }
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
    }

    /// Compared as SHA-256 digests, in constant time: the comparison says nothing of how much matched.
    static func authorized(_ header: String?, token: String) -> Bool {
        guard let header, header.lowercased().hasPrefix("bearer ") else { return false }
        let given = header.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
        let a = SHA256.hash(data: Array(given.utf8)), b = SHA256.hash(data: Array(token.utf8))
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The second listener: `/metrics` only; everything else 404.
    static func application(host: String, port: Int, token: String?, metrics: CloudMetrics, logger: Logger) -> some ApplicationProtocol {
        let router = Router()
        router.on(RouterPath(path), method: .get) { request, _ in answer(request, token: token, metrics: metrics) }
        return Application(router: router, configuration: .init(address: .hostname(host, port: port), serverName: "pacer-cloud-metrics"),
                           logger: logger)
    }

    static let path = "metrics"
}
