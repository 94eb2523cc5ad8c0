import Hummingbird
import NIOCore

/// Turns whatever a route or Hummingbird throws into the API's JSON error shape, so a client
/// never has to parse an empty or plain-text error; unexpected errors are logged, not shown.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = CloudRequestContext

    /// The routes, for a 405's `Allow`.
    let routes: AccessRegistry

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let refusal as WebRefusal {
            // The account pages' refusals are pages, rendered by the refusal itself.
            throw refusal
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, "too_large", "the body is larger than \(context.maxUploadSize) bytes")
        } catch let error as HTTPError where error.status == .notFound && error.body == nil {
            // The router found no route: a known path with another method is 405, not 404.
            if let allowed = routes.methods(for: request.uri.path) {
                var refusal = APIError(.methodNotAllowed, "method_not_allowed",
                                       "\(request.method) is not taken here; this path takes \(allowed.joined(separator: ", "))")
                refusal.allow = allowed.joined(separator: ", ")
                throw refusal
            }
            throw APIError(.notFound, "not_found", "404 Not Found: \(request.method) \(request.uri.path)")
        } catch let error as HTTPError {
            throw APIError(error.status, error.status == .notFound ? "not_found" : "http_\(error.status.code)",
                           error.body ?? "\(error.status.code) \(error.status.reasonPhrase): \(request.method) \(request.uri.path)")
        } catch {
            // Logs outlive the secrets' owners' trust in them: no page secret, no token, not even
            // inside the error's text (a database error may quote its arguments).
            let secrets = LogRedaction.secrets(path: request.uri.path, authorization: request.headers[.authorization])
            context.logger.error("\(request.method) \(LogRedaction.path(request.uri.path)) failed: \(LogRedaction.text(String(reflecting: error), removing: secrets))")
            throw APIError(.internalServerError, "internal", "the server failed to handle this request; it is logged")
        }
    }
}
