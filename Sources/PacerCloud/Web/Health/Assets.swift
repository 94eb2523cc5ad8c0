import Crypto
import Foundation
import Hummingbird
import Synchronization

/// Every page's script and style files under `/assets/PACKAGE/FILE` (the run, heart-rate,
/// plan and alert pages' and the dashboard's): Leaflet and Chart.js
/// from Debian's libjs-leaflet and libjs-chart.js (in `MapSettings.assetsDirectory`), and the
/// page's own script, compiled in. Only the files listed here are served, never a path from the
/// request. Each is read once and kept; they are public, so browsers may keep them a day and
/// revalidate by ETag, and for a year without asking when the URL names their version
/// (`?v=`, a digest of the bytes: `url(_:)`, what the pages link to), since those bytes never
/// change under that URL.
final class Assets: Sendable {
    struct File: Sendable {
        var body: ByteBuffer
        var contentType: String
        var etag: String
        /// The digest the versioned URL carries.
        var version: String
    }

    /// (package, file) → the path below the assets directory and the content type.
    static let served: [String: (path: String, contentType: String)] = [
        "leaflet/leaflet.js": ("leaflet/leaflet.js", "text/javascript; charset=utf-8"),
        "leaflet/leaflet.css": ("leaflet/leaflet.css", "text/css; charset=utf-8"),
        "chart.js/chart.min.js": ("chart.js/chart.min.js", "text/javascript; charset=utf-8"),
    ]
    static let cacheControl = "public, max-age=86400"
    /// A URL with the file's version: its bytes never change.
    static let versionedCacheControl = "public, max-age=31536000, immutable"

    let directory: String
    private let loaded = Mutex<[String: File]>([:])

    init(directory: String) {
        self.directory = directory
        // Read now, so the first page already links them by version; one that cannot be read
        // is reported when it is asked for (`load`).
        for key in Self.served.keys { _ = try? load(key) }
    }

    /// The file with its ETag (a digest of its bytes).
    static func file(_ data: Data, contentType: String) -> File {
        let digest = Data(SHA256.hash(data: data)).prefix(12).base64EncodedString()
        let version = digest.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        return File(body: ByteBuffer(bytes: data), contentType: contentType, etag: "\"" + digest + "\"", version: version)
    }

    /// The versions of the files read so far, by key ("leaflet/leaflet.js"): this server's own
    /// from the start, the packages' once first served. Process-wide, as the pages' templates
    /// are; a version that is not the served file's (another assets directory) only loses the
    /// year's caching.
    private static let knownVersions = Mutex<[String: String]>(own.mapValues(\.version))

    /// What a page links to: the file's URL with its version when it is known.
    static func url(_ key: String) -> String {
        "/assets/" + key + (knownVersions.withLock { $0[key] }.map { "?v=" + $0 } ?? "")
    }

    /// Every page's asset URLs (`{{assets.run_js}}` in the templates).
    static func urls() -> [String: String] {
        ["leaflet_js": url("leaflet/leaflet.js"), "leaflet_css": url("leaflet/leaflet.css"), "chart_js": url("chart.js/chart.min.js"),
         "run_js": url("pacer/run.js"), "plan_js": url("pacer/plan.js"), "heart_js": url("pacer/heart.js"), "alert_js": url("pacer/alert.js"),
         "stats_js": url("pacer/stats.js"),
         "dashboard_js": url("pacer/dashboard.js"), "race_js": url("pacer/race.js"), "icon": url("pacer/icon.svg")]
    }

    static let own: [String: File] = [
        "pacer/run.js": file(Data(RunScript.source.utf8), contentType: "text/javascript; charset=utf-8"),
        "pacer/plan.js": file(Data(PlanTemplates.script.utf8), contentType: "text/javascript; charset=utf-8"),
        "pacer/heart.js": file(Data(RunScript.heart.utf8), contentType: "text/javascript; charset=utf-8"),
        "pacer/stats.js": file(Data(RunScript.volume.utf8), contentType: "text/javascript; charset=utf-8"),
        "pacer/alert.js": file(Data(RunScript.alert.utf8), contentType: "text/javascript; charset=utf-8"),
        "pacer/dashboard.js": file(Data(DashboardScript.source.utf8), contentType: "text/javascript; charset=utf-8"),
        "pacer/race.js": file(Data(RaceScript.source.utf8), contentType: "text/javascript; charset=utf-8"),
        "pacer/icon.svg": file(Data(icon.utf8), contentType: "image/svg+xml"),
    ]

    /// Every page's favicon (`<link rel="icon">`): a small SVG, allowed by the pages' `img-src 'self'`.
    static let icon = ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f5fbf"/>"##
        + ##"<path d="M9 23 L16 9 L23 23" fill="none" stroke="#fff" stroke-width="3.5" stroke-linecap="round" stroke-linejoin="round"/></svg>"##

    func response(package: String, file name: String, request: Request) throws -> Response {
        let key = package + "/" + name
        guard let file = try Self.own[key] ?? load(key) else {
            throw WebRefusal.plain(.notFound, "no file \(key.prefix(80)) here")
        }
        let versioned = request.uri.queryParameters["v"].map(String.init) == file.version
        var headers: HTTPFields = [.contentType: file.contentType, .cacheControl: versioned ? Self.versionedCacheControl : Self.cacheControl,
                                   .eTag: file.etag]
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
        Self.knownVersions.withLock { $0[key] = file.version }
        return file
    }
}

struct AssetMissing: Error, CustomStringConvertible {
    var path: String
    var description: String { "cannot read \(path): install libjs-leaflet and libjs-chart.js, or point --assets-dir at their files" }
}
