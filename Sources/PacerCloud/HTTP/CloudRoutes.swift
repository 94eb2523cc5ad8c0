import Hummingbird

/// Builds pacer-cloud's router: `/health` and `/a/{secret}` open, everything under `/v1`
/// behind a device's bearer token.
public struct CloudRoutes: Sendable {
    let store: any CloudStore
    let configuration: CloudConfiguration
    /// Called after a new alert message queued forwards, so they go out now, not at the next poll.
    let wakeForwarder: @Sendable () -> Void

    public init(store: any CloudStore, configuration: CloudConfiguration, wakeForwarder: @escaping @Sendable () -> Void = {}) {
        self.store = store
        self.configuration = configuration
        self.wakeForwarder = wakeForwarder
    }

    public func router() -> Router<CloudRequestContext> {
        let router = Router(context: CloudRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        router.get("health") { _, _ in
            JSONInput.json(Array(#"{"status":"ok"}"#.utf8))
        }
        router.get("a/:secret") { _, context in try await alertPage(context: context) }

        let v1 = router.group("v1").add(middleware: DeviceAuthenticator(store: store))
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
