import Hummingbird

/// Applies one `RateLimiter` to the requests `applies` picks, keyed by the client's address or
/// by the authenticated device; over the limit is 429 with Retry-After, and the request goes no
/// further (not even to the database).
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = CloudRequestContext

    enum Key: Sendable {
        /// The client's address (X-Forwarded-For only from a trusted proxy); before authentication.
        case clientAddress(trustedProxies: Set<String>)
        /// The device the token belongs to; after `DeviceAuthenticator`.
        case device
    }

    let limiter: RateLimiter
    let key: Key
    /// What is limited and named in the refusal ("uploads", "alert page lookups").
    let what: String
    let applies: @Sendable (Request) -> Bool
    /// The refusal as an HTML page (for the alert page's visitors) instead of the JSON error.
    var html = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard applies(request) else { return try await next(request, context) }
        let bucket: String
        let source: String
        switch key {
        case .clientAddress(let trustedProxies):
            let forwarded = request.headers.filter { $0.name.canonicalName == "x-forwarded-for" }.map(\.value)
            // An IPv6 client by its /64: one subscriber has all of it to pick new addresses from.
            bucket = "address " + ClientAddress.rateKey(
                ClientAddress.resolve(peer: context.peerAddress, forwardedFor: forwarded, trustedProxies: trustedProxies))
            source = "this address"
        case .device:
            bucket = "device " + (try DeviceContext(context: context)).device.id
            source = "this device"
        }
        guard case .limited(let seconds) = limiter.take(bucket) else { return try await next(request, context) }
        CloudMetrics.current?.rateLimitRefused(what)
        let message = "too many \(what) from \(source): at most \(limiter.limit.phrase); retry after \(seconds) s"
        if html {
            var headers = AlertPage.headers
            headers[.retryAfter] = String(seconds)
            return Response(status: .tooManyRequests, headers: headers, body: .init(byteBuffer: ByteBuffer(string: AlertPage.tooManyRequests(retryAfter: seconds))))
        }
        var refusal = APIError(.tooManyRequests, "rate_limited", message)
        refusal.retryAfter = seconds
        throw refusal
    }
}
