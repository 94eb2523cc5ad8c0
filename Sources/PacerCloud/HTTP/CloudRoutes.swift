import Hummingbird

/// Builds pacer-cloud's router: `/health` and `/a/{secret}` open, everything under `/v1`
/// behind a device's bearer token.
public struct CloudRoutes: Sendable {
    let store: any CloudStore
    let configuration: CloudConfiguration
    /// "https://cloud.example.org": what alert page links start with (`CloudConfiguration.linkBase`).
    let linkBase: String
    /// Called after a new alert message queued forwards, so they go out now, not at the next poll.
    let wakeForwarder: @Sendable () -> Void
    /// One per limit, shared by every request this router serves.
    let alertPageLimiter: RateLimiter?
    let uploadAddressLimiter: RateLimiter?
    let uploadDeviceLimiter: RateLimiter?

    public init(store: any CloudStore, configuration: CloudConfiguration, linkBase: String,
                now: @escaping @Sendable () -> Duration = RateLimiter.monotonicNow, wakeForwarder: @escaping @Sendable () -> Void = {}) {
        self.store = store
        self.configuration = configuration
        self.linkBase = linkBase
        self.wakeForwarder = wakeForwarder
        let limits = configuration.rateLimits
        alertPageLimiter = limits.alertPagePerAddress.map { RateLimiter($0, now: now) }
        uploadAddressLimiter = limits.uploadPerAddress.map { RateLimiter($0, now: now) }
        uploadDeviceLimiter = limits.uploadPerDevice.map { RateLimiter($0, now: now) }
    }

    public func router() -> Router<CloudRequestContext> {
        let router = Router(context: CloudRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        router.get("health") { _, _ in
            JSONInput.json(Array(#"{"status":"ok"}"#.utf8))
        }
        let clientAddress = RateLimitMiddleware.Key.clientAddress(trustedProxies: configuration.trustedProxies)
        let pages = router.group("a")
        if let alertPageLimiter {
            pages.add(middleware: RateLimitMiddleware(limiter: alertPageLimiter, key: clientAddress, what: "alert page lookups",
                                                      applies: { _ in true }, html: true))
        }
        pages.get(":secret") { _, context in try await alertPage(context: context) }

        // Uploads are every PUT; alerts (POST) and reads are never limited here.
        let isUpload: @Sendable (Request) -> Bool = { $0.method == .put }
        let v1 = router.group("v1")
        if let uploadAddressLimiter {
            v1.add(middleware: RateLimitMiddleware(limiter: uploadAddressLimiter, key: clientAddress, what: "uploads", applies: isUpload))
        }
        v1.add(middleware: DeviceAuthenticator(store: store))
        if let uploadDeviceLimiter {
            v1.add(middleware: RateLimitMiddleware(limiter: uploadDeviceLimiter, key: .device, what: "uploads", applies: isUpload))
        }
        v1.put("runs/:run_id/chunks/:seq") { request, context in try await putChunk(request, context: context) }
        v1.put("runs/:run_id") { request, context in try await putSummary(request, context: context) }
        v1.get("runs") { request, context in try await listRuns(request, context: context) }
        v1.get("runs/:run_id") { _, context in try await showRun(context: context) }
        v1.get("runs/:run_id/gpx") { _, context in try await runGPX(context: context) }
        v1.delete("runs/:run_id") { _, context in try await deleteRun(context: context) }
        v1.put("position") { request, context in try await putPosition(request, context: context) }
        v1.get("position") { _, context in try await getPosition(context: context) }
        v1.post("alerts") { request, context in try await postAlert(request, context: context) }
        v1.get("alerts") { request, context in try await listAlerts(request, context: context) }
        return router
    }
}
