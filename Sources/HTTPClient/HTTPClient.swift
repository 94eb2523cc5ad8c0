import CCurl
import Threads

/// HTTP/1.1 over libcurl (OpenSSL), for the device's few requests: SOS alerts, run uploads.
/// URLSession (FoundationNetworking) and AsyncHTTPClient cost the Pi too much memory.
///
/// Every `perform` runs its blocking curl_easy_perform on a thread of its own, started for that
/// request and ended with it. Not a shared worker: a request queued behind another would wait
/// for it, and an SOS alert must never wait behind a slow run upload. Not the cooperative pool:
/// it has two threads here and on the Pi, and a blocked one stalls every task. A thread per
/// request costs little: requests are rare, and a thread's stack is only virtual memory until
/// it is touched.
///
/// TLS is always verified (peer and host name), TLS 1.2 or newer; redirects are never followed
/// (a 3xx is a response); proxies in the environment are ignored. Cancelling the awaiting task
/// abandons the transfer within about a second (`HTTPClientError.cancelled`).
public final class HTTPClient: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// A PEM file of the only CA(s) to trust, for a server with a private CA; nil: the
        /// system's store (/etc/ssl/certs).
        public var caFile: String?
        /// A client certificate (PEM) and its key, for a server that authenticates devices by
        /// certificate; nil: none.
        public var clientCertificate: String?
        public var clientKey: String?
        public var userAgent: String
        /// A longer response body fails the request with `.tooLarge` instead of being buffered.
        public var maxResponseBytes: Int

        public init(caFile: String? = nil, clientCertificate: String? = nil, clientKey: String? = nil, userAgent: String = "pacerd",
                    maxResponseBytes: Int = 1 << 20) {
            self.caFile = caFile
            self.clientCertificate = clientCertificate
            self.clientKey = clientKey
            self.userAgent = userAgent
            self.maxResponseBytes = max(0, maxResponseBytes)
        }
    }

    public let configuration: Configuration

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Sends `request` and returns the response, whatever its status; throws when there is none.
    /// Requests in flight at once do not wait for each other.
    public func perform(_ request: HTTPRequest) async throws(HTTPClientError) -> HTTPResponse {
        if let error = CurlLibrary.ready() { throw error }
        let prepared = try PreparedRequest(request)
        if Task.isCancelled { throw .cancelled }
        let configuration = configuration
        let cancellation = CancellationFlag()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<HTTPResponse, HTTPClientError>, Never>) in
                do throws(ThreadStartError) {
                    try DetachedThread.start {
                        let transfer = Transfer(prepared, configuration: configuration, cancellation: cancellation)
                        continuation.resume(returning: transfer.run())
                    }
                } catch {
                    continuation.resume(returning: .failure(.cannotStartThread(error.description)))
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// The same on the calling thread, which it blocks: for a caller that has a thread of its
    /// own (the uplink), never for a task in the cooperative pool.
    public func performBlocking(_ request: HTTPRequest) throws(HTTPClientError) -> HTTPResponse {
        if let error = CurlLibrary.ready() { throw error }
        let prepared = try PreparedRequest(request)
        return try Transfer(prepared, configuration: configuration, cancellation: CancellationFlag()).run().get()
    }
}
