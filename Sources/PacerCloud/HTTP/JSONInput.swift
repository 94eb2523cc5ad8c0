import CloudModel
import Foundation
import Hummingbird
import NIOCore
import PacerContract

/// Reads a request's JSON body into `T`, turning every decoding failure into a 400 that names
/// the field (`missing field 'start_time'`, `field 'position.lat': expected a number`).
enum JSONInput {
    /// `limit`: a route's own cap below the server's (an alert message's); nil: the server's.
    static func body(of request: Request, context: some RequestContext, limit: Int? = nil) async throws -> [UInt8] {
        let cap = min(limit ?? context.maxUploadSize, context.maxUploadSize)
        if let length = request.headers[.contentLength].flatMap(Int.init), length > cap {
            throw APIError(.contentTooLarge, "too_large", "the body is \(length) bytes; at most \(cap) are taken")
        }
        var request = request
        do {
            return Array(buffer: try await request.collectBody(upTo: cap))
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, "too_large", "the body is larger than \(cap) bytes")
        }
    }

    /// A JSON request's body: `Content-Type`, when sent, must be application/json in UTF-8.
    static func jsonBody(of request: Request, context: some RequestContext, limit: Int? = nil) async throws -> [UInt8] {
        if let type = request.headers[.contentType] {
            let parts = type.lowercased().split(separator: ";").map { String($0).trimmingSpaces }
            let charset = parts.dropFirst().first { $0.hasPrefix("charset=") }?.dropFirst("charset=".count)
            guard parts.first == "application/json", charset == nil || charset == "utf-8" || charset == "\"utf-8\"" else {
                throw APIError(.unsupportedMediaType, "unsupported_media_type",
                               "Content-Type is \(WireLimits.quoted(type)); this route takes application/json in UTF-8")
            }
        }
        return try await body(of: request, context: context, limit: limit)
    }

    /// Decodes a JSON body, which must be UTF-8 (no byte order mark, no NUL): the stored text is
    /// the body as received, so it must be text every reader can take.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(APIError) -> T {
        guard !bytes.isEmpty else { throw .badRequest("bad_json", "the body is empty; a JSON object is expected") }
        guard !bytes.starts(with: [0xEF, 0xBB, 0xBF]), !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil else {
            throw .badRequest("bad_json", "the body is not UTF-8 JSON (UTF-16, a byte order mark or a NUL byte); send UTF-8")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw describe(error)
        } catch let error as APIError {
            throw error
        } catch {
            throw .badRequest("bad_json", "the body is not valid JSON: \(error)")
        }
    }

    static func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
        (codingPath + (last.map { [$0] } ?? [])).map { key in key.intValue.map { "[\($0)]" } ?? key.stringValue }
            .joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
    }

    static func describe(_ error: DecodingError) -> APIError {
        switch error {
        case .keyNotFound(let key, let context):
            return .badRequest("missing_field", "missing field '\(path(context.codingPath, key))'")
        case .valueNotFound(_, let context):
            return .badRequest("invalid_field", "field '\(path(context.codingPath))' is null; a value is required")
        case .typeMismatch(let type, let context):
            return .badRequest("invalid_field", "field '\(path(context.codingPath))' has the wrong type: expected \(expected(type))")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return .badRequest("bad_json", "the body is not valid JSON: \(context.underlyingError.map { "\($0)" } ?? context.debugDescription)")
            }
            return .badRequest("invalid_field", "field '\(path(context.codingPath))': \(context.debugDescription)")
        @unknown default:
            return .badRequest("bad_json", "the body could not be read: \(error)")
        }
    }

    private static func expected(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type: "a whole number"
        case is Double.Type: "a number"
        default: "\(type)"
        }
    }

    /// A field that decoded but is not acceptable.
    static func invalid(_ field: String, _ why: String) -> APIError {
        .badRequest("invalid_field", "field '\(field)' \(why)")
    }

    static func encode(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return json(Array(try encoder.encode(value)), status: status)
    }

    static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// Canonical JSON (sorted keys) of `value`, as stored: a repeat compares equal as text.
    static func canonical(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
