import Hummingbird

/// Builds pacer-cloud's router: `/health` and `/a/{secret}` open, everything under `/v1`
/// behind a device's bearer token, the account pages behind a session. Every route is added
/// with its `AccessPolicy`, recorded in `accessRegistry` for the access harness.
public struct CloudRoutes: Sendable {
    let store: CloudStore
    let configuration: CloudConfiguration
    /// "https://cloud.example.org": what alert page links start with (`CloudConfiguration.linkBase`).
    let linkBase: String
    /// Called after a new alert message queued forwards, so they go out now, not at the next poll.
    let wakeForwarder: @Sendable () -> Void
    /// One per limit, shared by every request this router serves.
    let alertPageLimiter: RateLimiter?
    let uploadAddressLimiter: RateLimiter?
    let uploadDeviceLimiter: RateLimiter?
    /// Log-in by account id: a bucket in use is never evicted by other keys (`limitAttempts`).
    let loginAccountLimiter: RateLimiter?
    /// Log-in by the address typed when it has no account: evictable, its keys are made up.
    let loginNoAccountLimiter: RateLimiter?
    let loginAddressLimiter: RateLimiter?
    let linkAddressLimiter: RateLimiter?
    /// Milliseconds since 1970: what sessions and e-mailed links expire by.
    let wallClock: @Sendable () -> Int64
    /// Tells dashboards (of every instance) what changed.
    let hub: any EventHub
    /// Dashboard streams open per account on this instance.
    let streams = StreamCounter()
    /// Alert messages per device and alert (issue 31), never refusing a real SOS.
    let alertAdmission: AlertAdmission
    /// Imports' reading and run views' computing, off the request path (`WorkQueue`).
    let heavyWork = WorkQueue()
    /// Long-polls open per device and event streams per session on this instance (ConnectionLimits).
    let holds = HoldCounter()
    /// The run page's script files.
    let assets: Assets
    /// Each route's policy, filled by `router()`.
    public let accessRegistry = AccessRegistry()

    public init(store: CloudStore, configuration: CloudConfiguration, linkBase: String,
                now: @escaping @Sendable () -> Duration = RateLimiter.monotonicNow, wallClock: @escaping @Sendable () -> Int64 = SessionSettings.systemClock,
                wakeForwarder: @escaping @Sendable () -> Void = {}, hub: any EventHub = LocalEventHub()) {
        self.hub = hub
        self.wallClock = wallClock
        self.store = store
        self.configuration = configuration
        self.linkBase = linkBase
        self.wakeForwarder = wakeForwarder
        assets = Assets(directory: configuration.map.assetsDirectory)
        let limits = configuration.rateLimits
        alertPageLimiter = limits.alertPagePerAddress.map { RateLimiter($0, now: now) }
        uploadAddressLimiter = limits.uploadPerAddress.map { RateLimiter($0, now: now) }
        uploadDeviceLimiter = limits.uploadPerDevice.map { RateLimiter($0, now: now) }
        loginAccountLimiter = limits.loginPerAccount.map { RateLimiter($0, evictsInUse: false, now: now) }
        loginNoAccountLimiter = limits.loginPerAccount.map { RateLimiter($0, now: now) }
        loginAddressLimiter = limits.loginPerAddress.map { RateLimiter($0, now: now) }
        linkAddressLimiter = limits.linkPerAddress.map { RateLimiter($0, now: now) }
        alertAdmission = AlertAdmission(now: now)
    }

    public func router() -> Router<CloudRequestContext> {
        let router = Router(context: CloudRequestContext.self)
        // Outermost, so it counts the statuses ErrorMiddleware's refusals become.
        router.add(middleware: RequestMetricsMiddleware(metrics: configuration.metrics, settings: configuration.metricsAccess))
        router.add(middleware: ErrorMiddleware(routes: accessRegistry))
        let root = PolicedRoutes(group: router.group(), prefix: "", registry: accessRegistry)
        root.on(.get, "health", PublicAccess(why: "a liveness probe that says nothing")) { _, _ in
            JSONInput.json(Array(#"{"status":"ok"}"#.utf8))
        }
        // Outside the session middleware: files the same for everyone need no session lookup.
        root.on(.get, "assets/:package/:file", PublicAccess(why: "the run page's script libraries, the same for everyone")) { request, context in
            try assets.response(package: context.parameters.get("package") ?? "", file: context.parameters.get("file") ?? "", request: request)
        }
        let clientAddress = RateLimitMiddleware.Key.clientAddress(trustedProxies: configuration.trustedProxies)
        let pages = router.group("a")
        if let alertPageLimiter {
            pages.add(middleware: RateLimitMiddleware(limiter: alertPageLimiter, key: clientAddress, what: "alert page lookups",
                                                      applies: { _ in true }, html: true))
        }
        PolicedRoutes(group: pages, prefix: "/a", registry: accessRegistry)
            .on(.get, ":secret", PublicAccess(why: "the 192-bit secret in the path is the credential; rate-limited per address")) { _, context in
                try await alertPage(context: context)
            }

        // A group of its own: no bearer token yet, the link code is the credential.
        let linking = router.group("v1")
        if let linkAddressLimiter {
            linking.add(middleware: RateLimitMiddleware(limiter: linkAddressLimiter, key: clientAddress, what: "link attempts", applies: { _ in true }))
        }
        PolicedRoutes(group: linking, prefix: "/v1", registry: accessRegistry)
            .on(.post, "link", PublicAccess(why: "the one-time link code in the body is the credential; rate-limited per address")) { request, context in
                try await linkDevice(request, context: context)
            }

        // Uploads are every PUT; alerts (POST) and reads are never limited here.
        let isUpload: @Sendable (Request) -> Bool = { $0.method == .put }
        let v1 = router.group("v1")
        if let uploadAddressLimiter {
            v1.add(middleware: RateLimitMiddleware(limiter: uploadAddressLimiter, key: clientAddress, what: "uploads", applies: isUpload))
        }
        v1.add(middleware: DeviceAuthenticator(store: store, wallClock: wallClock))
        if let uploadDeviceLimiter {
            v1.add(middleware: RateLimitMiddleware(limiter: uploadDeviceLimiter, key: .device, what: "uploads", applies: isUpload))
        }
        let device = PolicedRoutes(group: v1, prefix: "/v1", registry: accessRegistry)
        device.on(.put, "runs/:run_id/chunks/:seq", DeviceAccess()) { request, context in try await putChunk(request, context: context) }
        device.on(.put, "runs/:run_id", DeviceAccess()) { request, context in try await putSummary(request, context: context) }
        device.on(.get, "runs", DeviceAccess()) { request, context in try await listRuns(request, context: context) }
        device.on(.get, "runs/:run_id", DeviceAccess()) { _, context in try await showRun(context: context) }
        device.on(.get, "runs/:run_id/gpx", DeviceAccess()) { _, context in try await runGPX(context: context) }
        device.on(.delete, "runs/:run_id", DeviceAccess()) { _, context in try await deleteRun(context: context) }
        device.on(.put, "position", DeviceAccess()) { request, context in try await putPosition(request, context: context) }
        device.on(.get, "position", DeviceAccess()) { _, context in try await getPosition(context: context) }
        device.on(.post, "alerts", DeviceAccess()) { request, context in try await postAlert(request, context: context) }
        device.on(.get, "alerts", DeviceAccess()) { request, context in try await listAlerts(request, context: context) }
        device.on(.delete, "link", DeviceAccess()) { _, context in try await unlinkSelf(context: context) }
        device.on(.get, "device/sync", DeviceAccess()) { request, context in try await getDeviceSync(request, context: context) }
        device.on(.post, "device/sync/ack", DeviceAccess()) { request, context in try await postSyncAck(request, context: context) }
        device.on(.put, "device/state", DeviceAccess()) { request, context in try await putDeviceState(request, context: context) }
        addDeviceMonitorRoutes(device)

        let web = router.group()
        web.add(middleware: SessionMiddleware(sessions: sessions))
        let webRoutes = PolicedRoutes(group: web, prefix: "", registry: accessRegistry)
        addWebRoutes(webRoutes)
        addDeviceRoutes(webRoutes)
        addFileRoutes(webRoutes)
        addMonitorRoutes(webRoutes)
        addRunnerRoutes(webRoutes)
        addPlanRoutes(webRoutes)
        return router
    }
}
