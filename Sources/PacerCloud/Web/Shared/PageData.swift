import Foundation

/// What the pages with a script (run, heart rate, alert, dashboard) share.
enum PageData {
    /// JSON for a page's data block: no "<" reaches the page unescaped (a block ends at "</script").
    static func script(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
    }

    /// Tile servers want to know the site their tiles are shown on (OpenStreetMap's refuses
    /// requests without a Referer): the origin only, never the page's path. Every page with a map.
    static let mapReferrer = "strict-origin"
}
