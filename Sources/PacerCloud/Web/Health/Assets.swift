import Crypto
import Foundation
import Hummingbird
import Synchronization

/// Every page's script and style files under `/assets/PACKAGE/FILE` (the run, heart-rate,
/// plan and alert pages' and the dashboard's): Leaflet and Chart.js
/// from Debian's libjs-leaflet and libjs-chart.js (in `MapSettings.assetsDirectory`), and the
/// page's own script, compiled in. Only the files listed here are served, never a path from the
/// request. Each is read once and kept; they are public and versioned with the package, so
/// browsers may keep them a day and revalidate by ETag.
final class Assets: Sendable {
    struct File: Sendable {
        var body: ByteBuffer
        var contentType: String
        var etag: String
    }

    /// (package, file) → the path below the assets directory and the content type.
    static let served: [String: (path: String, contentType: String)] = [
        "leaflet/leaflet.js": ("leaflet/leaflet.js", "text/javascript; charset=utf-8"),
        "leaflet/leaflet.css": ("leaflet/leaflet.css", "text/css; charset=utf-8"),
        "chart.js/chart.min.js": ("chart.js/chart.min.js", "text/javascript; charset=utf-8"),
    ]
    static let cacheControl = "public, max-age=86400"

    let directory: String
    private let loaded = Mutex<[String: File]>([:])

    init(directory: String) {
        self.directory = directory
    }

    /// The file with its ETag (a digest of its bytes).
    static func file(_ data: Data, contentType: String) -> File {
        File(body: ByteBuffer(bytes: data), contentType: contentType,
             etag: "\"" + Data(SHA256.hash(data: data)).prefix(12).base64EncodedString() + "\"")
    }

    static let own: [String: File] = [
        "pacer/run.js": file(Data(RunScript.source.utf8), contentType: "text/javascript; charset=utf-8"),
        "pacer/plan.js": file(Data(PlanTemplates.script.utf8), contentType: "text/javascript; charset=utf-8"),
        "pacer/heart.js": file(Data(RunScript.heart.utf8), contentType: "text/javascript; charset=utf-8"),
        "pacer/alert.js": file(Data(RunScript.alert.utf8), contentType: "text/javascript; charset=utf-8"),
        "pacer/dashboard.js": file(Data(DashboardScript.source.utf8), contentType: "text/javascript; charset=utf-8"),
    ]

    func response(package: String, file name: String, request: Request) throws -> Response {
        let key = package + "/" + name
        guard let file = try Self.own[key] ?? load(key) else {
            throw WebRefusal.plain(.notFound, "no file \(key.prefix(80)) here")
        }
        var headers: HTTPFields = [.contentType: file.contentType, .cacheControl: Self.cacheControl, .eTag: file.etag]
        headers[.init("X-Content-Type-Options")!] = "nosniff"
        if request.headers[.ifNoneMatch] == file.etag { return Response(status: .notModified, headers: headers) }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.body))
    }

    /// The listed file, read the first time it is asked for; nil when it is not listed. A
    /// listed file that cannot be read is the operator's to fix (the package is missing): 500
    /// with the path in the log, not a page without its map.
    private func load(_ key: String) throws -> File? {
        guard let entry = Self.served[key] else { return nil }
        if let file = loaded.withLock({ $0[key] }) { return file }
        let path = directory + "/" + entry.path
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AssetMissing(path: path)
        }
        let file = Self.file(data, contentType: entry.contentType)
        loaded.withLock { $0[key] = file }
        return file
    }
}

struct AssetMissing: Error, CustomStringConvertible {
    var path: String
    var description: String { "cannot read \(path): install libjs-leaflet and libjs-chart.js, or point --assets-dir at their files" }
}
