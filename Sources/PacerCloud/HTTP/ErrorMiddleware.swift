import Hummingbird
import NIOCore

/// Turns whatever a route or Hummingbird throws into the API's JSON error shape, so a client
/// never has to parse an empty or plain-text error, or, for a browser asking for a page, into
/// an HTML page in the layout; unexpected errors are logged, not shown.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = CloudRequestContext

    /// The routes, for a 405's `Allow`.
    let routes: AccessRegistry

    /// Whether a browser is signed in, for an error page's nav.
    let sessions: Sessions

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let refusal as WebRefusal {
            // The account pages' refusals are pages, rendered by the refusal itself.
            throw refusal
        } catch {
            let refusal = apiError(for: error, request: request, context: context)
            guard Self.wantsPage(request) else { throw refusal }
            return await page(for: refusal, request: request)
        }
    }

    /// A browser navigating (its Accept names text/html) outside the device API gets an HTML
    /// page; the API (/v1) and every other client keep the JSON error.
    static func wantsPage(_ request: Request) -> Bool {
        let path = request.uri.path
        guard path != "/v1", !path.hasPrefix("/v1/") else { return false }
        return request.headers[values: .accept].contains { $0.lowercased().contains("text/html") }
    }

    /// The error as a page in the layout, its status and headers kept, with a way back.
    private func page(for refusal: APIError, request: Request) async -> Response {
        var signedIn = false
        if let cookie = request.cookies[Sessions.cookieName]?.value, !cookie.isEmpty {
            // A database that fails here gives the signed-out nav, not a second failure.
            signedIn = (try? await sessions.isLive(cookie: cookie)) ?? false
        }
        let path = String(request.uri.path.prefix(200))
        let (title, text): (String, String) = switch refusal.status {
        case .notFound: ("No such page", "There is no page at \(path).")
        case .methodNotAllowed: ("Not here", "This page cannot be used that way.")
        case .internalServerError: ("Something went wrong", "The server could not show this page; the failure is logged. Try again in a moment.")
        default: (refusal.status.reasonPhrase, "")
        }
        var headers: HTTPFields = [:]
        if let allow = refusal.allow { headers[.allow] = allow }
        if let retryAfter = refusal.retryAfter { headers[.retryAfter] = String(retryAfter) }
        return PageLayout.$viewer.withValue(.init(signedIn: signedIn, path: request.uri.path, nowMs: sessions.nowMs())) {
            WebPage.message.response(refusal.status, values: ["title": title, "text": text], csrf: nil,
                                     error: refusal.status == .notFound || refusal.status == .internalServerError ? nil : refusal.message,
                                     extraHeaders: headers)
        }
    }

    /// Whatever a route or Hummingbird threw, as the API's error.
    private func apiError(for error: any Error, request: Request, context: Context) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case is NIOTooManyBytesError:
            return APIError(.contentTooLarge, "too_large", "the body is larger than \(context.maxUploadSize) bytes")
        case let error as HTTPError where error.status == .notFound && error.body == nil:
            // The router found no route: a known path with another method is 405, not 404.
            if let allowed = routes.methods(for: request.uri.path) {
                var refusal = APIError(.methodNotAllowed, "method_not_allowed",
                                       "\(request.method) is not taken here; this path takes \(allowed.joined(separator: ", "))")
                refusal.allow = allowed.joined(separator: ", ")
                return refusal
            }
            return APIError(.notFound, "not_found", "404 Not Found: \(request.method) \(request.uri.path)")
        case let error as HTTPError:
            return APIError(error.status, error.status == .notFound ? "not_found" : "http_\(error.status.code)",
                            error.body ?? "\(error.status.code) \(error.status.reasonPhrase): \(request.method) \(request.uri.path)")
        default:
            // Logs outlive the secrets' owners' trust in them: no page secret, no token, not even
            // inside the error's text (a database error may quote its arguments).
            let secrets = LogRedaction.secrets(path: request.uri.path, authorization: request.headers[.authorization])
            context.logger.error("\(request.method) \(LogRedaction.path(request.uri.path)) failed: \(LogRedaction.text(String(reflecting: error), removing: secrets))")
            return APIError(.internalServerError, "internal", "the server failed to handle this request; it is logged")
        }
    }
}
