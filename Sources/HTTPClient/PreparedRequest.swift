import CCurl

/// A request checked before a thread is spent on it: the URL parsed by libcurl's own parser
/// (so what is checked is what will be fetched), the method and headers checked for bytes that
/// would split or corrupt the request, and the header lines in libcurl's syntax.
struct PreparedRequest: Sendable {
    let request: HTTPRequest
    let host: String
    let port: Int
    /// "Name: value" lines for CURLOPT_HTTPHEADER.
    let headerLines: [String]

    init(_ request: HTTPRequest) throws(HTTPClientError) {
        self.request = request
        guard let parts = Self.parse(request.url) else { throw .invalidURL(request.url) }
        (host, port) = parts
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(Self.isTokenByte) else {
            throw .invalidRequest("method '\(request.method)' is not an HTTP token")
        }
        var lines: [String] = []
        for (name, value) in request.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else {
                throw .invalidRequest("header name '\(name)' is not an HTTP token")
            }
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw .invalidRequest("the value of header '\(name)' contains CR, LF or NUL")
            }
            // libcurl reads "Name:" as "remove this header"; "Name;" sends it with an empty value.
            lines.append(value.isEmpty ? name + ";" : name + ": " + value)
        }
        let names = Set(request.headers.map { $0.0.lowercased() })
        // Without a Content-Type, libcurl would claim application/x-www-form-urlencoded.
        if !names.contains("content-type") { lines.append("Content-Type:") }
        // Expect: 100-continue costs a round trip (or a 1 s wait on servers that ignore it)
        // before every body over 1 KiB; the bodies here are small enough to just send.
        if !names.contains("expect") { lines.append("Expect:") }
        headerLines = lines
    }

    /// HTTP methods and header names are tokens (RFC 9110, 5.6.2).
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// The host and port (the scheme's default when none is given) of an absolute http or https
    /// URL; nil for anything else.
    private static func parse(_ url: String) -> (host: String, port: Int)? {
        guard let handle = pacer_curl_url() else { return nil }
        defer { pacer_curl_url_cleanup(handle) }
        // Without CURLU_NON_SUPPORT_SCHEME, libcurl refuses schemes it was not built with;
        // the scheme is checked below anyway.
        guard pacer_curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK,
            let scheme = part(handle, CURLUPART_SCHEME, flags: 0)?.lowercased(),
            scheme == "http" || scheme == "https",
            let host = part(handle, CURLUPART_HOST, flags: 0), !host.isEmpty,
            let port = part(handle, CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)).flatMap({ Int($0) })
        else { return nil }
        return (host, port)
    }

    private static func part(_ handle: OpaquePointer, _ which: CURLUPart, flags: UInt32) -> String? {
        var text: UnsafeMutablePointer<CChar>? = nil
        guard pacer_curl_url_get(handle, which, &text, flags) == CURLUE_OK, let text else { return nil }
        defer { pacer_curl_free(text) }
        return String(cString: text)
    }
}
