import CCurl

/// Requests one after another on one libcurl handle, so they share its connection and TLS
/// session: a run upload of 24 requests does one TLS handshake instead of 24 (measured by
/// tools/bench-upload: each handshake costs 2.3-3.9 KB on the wire). Used by one thread at a time
/// (the uplink's); not Sendable. SOS alerts keep the per-request `HTTPClient`, which never
/// makes one request wait for another.
public final class HTTPSession {
    public let configuration: HTTPClient.Configuration
    private var handle: UnsafeMutableRawPointer?

    public init(configuration: HTTPClient.Configuration) {
        self.configuration = configuration
    }

    deinit {
        if let handle { pacer_curl_easy_cleanup(handle) }
    }

    /// Sends `request` on this thread (blocking) and returns the response, whatever its status.
    public func perform(_ request: HTTPRequest) throws(HTTPClientError) -> HTTPResponse {
        if let error = CurlLibrary.ready() { throw error }
        let prepared = try PreparedRequest(request)
        if handle == nil {
            guard let created = pacer_curl_easy_init() else {
                throw .other(code: Int(CURLE_FAILED_INIT.rawValue), message: "curl_easy_init failed (out of memory?)")
            }
            handle = created
        }
        let result = Transfer(prepared, configuration: configuration, cancellation: CancellationFlag()).run(on: handle!)
        if case .failure = result {
            // After a failure, start afresh: no half-broken connection carries into the next try.
            pacer_curl_easy_cleanup(handle!)
            handle = nil
        }
        return try result.get()
    }
}
