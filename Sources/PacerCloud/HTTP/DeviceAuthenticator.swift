import CloudModel
import CloudStore
import Hummingbird

/// `Authorization: Bearer TOKEN` to a device: the token's SHA-256 is looked up, so a stolen
/// database gives no usable tokens. 401 with the JSON error otherwise.
struct DeviceAuthenticator: RouterMiddleware {
    typealias Context = CloudRequestContext
    let store: CloudStore
    /// Milliseconds since 1970: when the device was last seen ("My devices").
    let wallClock: @Sendable () -> Int64

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw APIError(.unauthorized, "unauthorized", "missing Authorization header: send Authorization: Bearer TOKEN")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            throw APIError(.unauthorized, "unauthorized", "the Authorization header is not 'Bearer TOKEN'")
        }
        guard let device = try await store.devices.device(tokenHash: Tokens.hash(String(parts[1]).trimmingSpaces)) else {
            throw APIError(.unauthorized, "unauthorized", "the bearer token is not one of a device")
        }
        // A write a minute at most, not per request: the page shows minutes.
        let now = wallClock()
        if now - (device.lastSeenMs ?? 0) >= 60_000 { try await store.devices.touchDevice(id: device.id, seenMs: now) }
        var context = context
        context.device = device
        context.logger[metadataKey: "device"] = .string(device.name)
        return try await next(request, context)
    }
}
