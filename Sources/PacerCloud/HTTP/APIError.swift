import Foundation
import Hummingbird

/// Every refusal the API gives: a status and `{"error": {"code", "message"}}`, the message
/// saying what is wrong and naming the field.
public struct APIError: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    /// The `Allow` header of a 405.
    public var allow: String?
    /// The `Retry-After` of a 429, in seconds.
    public var retryAfter: Int?

    /// The longest message: a refusal never echoes a large field back.
    static let maxMessageCharacters = 512

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message.utf8.count <= Self.maxMessageCharacters ? message : String(message.prefix(Self.maxMessageCharacters)) + "…"
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(ErrorBody(error: .init(code: code, message: message)))
        var headers: HTTPFields = [.contentType: "application/json"]
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if let allow { headers[.allow] = allow }
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func badRequest(_ code: String, _ message: String) -> APIError { APIError(.badRequest, code, message) }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, "not_found", message) }
}

/// `{"error": {"code", "message"}}`.
private struct ErrorBody: Encodable {
    struct Inner: Encodable {
        var code: String
        var message: String
    }
    var error: Inner
}
