import Gzip
import Hummingbird
import NIOCore
import Synchronization

/// gzip for pages, scripts, styles and JSON when the client accepts it (`Accept-Encoding`):
/// the run page's data and Chart.js and Leaflet shrink to about a fifth. Through zlib (the
/// `Gzip` module the device's chunks use already); brotli would need a library this server does
/// not link. Left as they are: bodies of unknown length (event streams), small ones, already
/// encoded ones (stored gzip chunks), binary types, and pages a browser fetches for another
/// site (`Sec-Fetch-Site: cross-site`): a page holds the session's CSRF token, and a compressed
/// page whose size an attacker's site can watch while it varies the page's other text is how
/// BREACH reads secrets. Files with an ETag (the assets) are compressed once and kept.
struct CompressionMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Below this, gzip's header and trailer eat most of what it saves.
    static var minimumBytes: Int { 1_024 }
    /// Above this a body is sent as it is (a long run's GPX): compressing it whole in memory
    /// would cost more than its transfer.
    static var maximumBytes: Int { 8 << 20 }

    /// Compressed asset bodies by their (uncompressed) ETag.
    let cache = CompressedCache()

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        // A browser revalidates the compressed copy with its ETag ("…-gzip"): the route knows the plain one.
        if let tag = request.headers[.ifNoneMatch], tag.hasSuffix(Self.etagSuffix + "\"") {
            var head = request.head
            head.headerFields[.ifNoneMatch] = String(tag.dropLast(Self.etagSuffix.count + 1)) + "\""
            request = Request(head: head, body: request.body)
        }
        var response = try await next(request, context)
        guard let type = response.headers[.contentType], Self.isCompressible(type) else { return response }
        response.headers[.vary] = response.headers[.vary].map { $0 + ", Accept-Encoding" } ?? "Accept-Encoding"
        if response.status == .notModified, Self.acceptsGzip(request), let tag = response.headers[.eTag] {
            response.headers[.eTag] = Self.compressedTag(tag)
            return response
        }
        guard request.method != .head, response.headers[.contentEncoding] == nil, Self.acceptsGzip(request),
              let length = response.body.contentLength, (Self.minimumBytes...Self.maximumBytes).contains(length),
              !(type.hasPrefix("text/html") && request.headers[.init("Sec-Fetch-Site")!] == "cross-site") else { return response }
        let tag = response.headers[.eTag]
        let compressed: ByteBuffer
        if let tag, let kept = cache.get(tag) {
            compressed = kept
        } else {
            let collected = CollectedBody()
            try await response.body.write(CollectingWriter(into: collected))
            let plain = collected.bytes
            guard let bytes = try? Gzip.compress(plain, level: 6), bytes.count < plain.count else {
                response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: plain))
                return response
            }
            compressed = ByteBuffer(bytes: bytes)
            if let tag { cache.put(tag, compressed) }
        }
        response.headers[.contentEncoding] = "gzip"
        response.headers[.contentLength] = nil
        if let tag { response.headers[.eTag] = Self.compressedTag(tag) }
        response.body = ResponseBody(byteBuffer: compressed)
        return response
    }

    static var etagSuffix: String { "-gzip" }

    /// `"abc"` → `"abc-gzip"`: the compressed bytes are another representation (RFC 9110 8.8.3).
    static func compressedTag(_ tag: String) -> String {
        tag.hasSuffix("\"") ? String(tag.dropLast()) + etagSuffix + "\"" : tag
    }

    /// Text, scripts, JSON, XML (GPX, TCX) and SVG; never images, FIT files or event streams.
    static func isCompressible(_ contentType: String) -> Bool {
        let type = contentType.lowercased()
        if type.hasPrefix("text/event-stream") { return false }
        return type.hasPrefix("text/") || type.contains("json") || type.contains("xml") || type.contains("javascript") || type.hasPrefix("image/svg")
    }

    /// Whether `Accept-Encoding` takes gzip: listed (or `*`) with a quality above 0.
    static func acceptsGzip(_ request: Request) -> Bool {
        var gzip: Double?, any: Double?
        for field in request.headers[values: .acceptEncoding] {
            for item in field.split(separator: ",") {
                let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard let coding = parts.first else { continue }
                let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
                if coding == "gzip" || coding == "x-gzip" { gzip = quality } else if coding == "*" { any = quality }
            }
        }
        return (gzip ?? any ?? 0) > 0
    }
}

/// The compressed bodies of files with an ETag; the assets are few, so it stays small.
final class CompressedCache: Sendable {
    private let entries = Mutex<[String: ByteBuffer]>([:])
    /// A bound, should ETags ever come from elsewhere than the handful of asset files.
    static let maxEntries = 64

    func get(_ tag: String) -> ByteBuffer? { entries.withLock { $0[tag] } }

    func put(_ tag: String, _ body: ByteBuffer) {
        entries.withLock { entries in
            if entries.count >= Self.maxEntries { entries.removeAll() }
            entries[tag] = body
        }
    }
}

/// Where `CollectingWriter` puts a response body's bytes.
private final class CollectedBody: @unchecked Sendable {
    // Written by one writer in one task, read after it finished: no concurrent access.
    var bytes: [UInt8] = []
}

private struct CollectingWriter: ResponseBodyWriter {
    let into: CollectedBody

    mutating func write(_ buffer: ByteBuffer) async throws {
        into.bytes.append(contentsOf: buffer.readableBytesView)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
