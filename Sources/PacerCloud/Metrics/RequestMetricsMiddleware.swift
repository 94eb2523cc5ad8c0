import Hummingbird

/// Counts every request by its matched route pattern ("/v1/runs/{run_id}", never the raw path:
/// the number of series stays that of the routes), method and status, times it to the end of
/// its body, keeps the in-flight and open-stream gauges, and answers `GET /metrics` when a
/// metrics token is configured (`MetricsSettings`). The outermost middleware: it sees the status
/// that `ErrorMiddleware`'s refusals become.
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = CloudRequestContext

    let metrics: CloudMetrics
    let settings: MetricsSettings

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.uri.path == MetricsSettings.path, let token = settings.token {
            return MetricsEndpoint.answer(request, token: token, metrics: metrics)
        }
        let start = ContinuousClock.now
        let method = request.method.rawValue
        // Hummingbird names the matched pattern before the middleware runs; "NotFound" for no route.
        let route = Self.route(context.endpointPath)
        let inFlight = metrics.requestStarted(route: route)
        let response: Response
        do {
            response = try await CloudMetrics.$current.withValue(metrics) { try await next(request, context) }
        } catch {
            inFlight.decrement()
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.requestFinished(route: route, method: method, status: status, duration: ContinuousClock.now - start)
            throw error
        }
        let status = response.status.code
        let stream = response.headers[.contentType]?.hasPrefix("text/event-stream") == true
        if stream { metrics.streamOpened() }
        var timed = response
        let body = response.body
        let metrics = metrics
        // The body is written after this returns: a download's or a stream's time is its own.
        timed.body = ResponseBody(contentLength: body.contentLength) { writer in
            defer {
                inFlight.decrement()
                if stream { metrics.streamClosed() }
                metrics.requestFinished(route: route, method: method, status: status, duration: ContinuousClock.now - start)
            }
            try await body.write(writer)
        }
        return timed
    }

    /// The route label: the matched pattern, or one fixed word.
    static func route(_ endpointPath: String?) -> String {
        guard let endpointPath, endpointPath.hasPrefix("/") else { return "unmatched" }
        return endpointPath
    }
}

extension CloudMetrics {
    /// The application's metrics while a request is handled, for code that has no reference to
    /// them (the rate-limit middleware's refusals happen inside the request).
    @TaskLocal static var current: CloudMetrics?
}
