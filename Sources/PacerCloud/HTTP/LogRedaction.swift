import CloudModel
import Foundation

/// What logs may show of a request: never an alert page's secret (the path `/a/{secret}` is the
/// key to that page) nor a bearer token, even inside an error's description.
public enum LogRedaction {
    public static let mark = "<redacted>"

    /// The path with an alert page's secret replaced and any query left out: `/a/<redacted>`.
    public static func path(_ path: String) -> String {
        let withoutQuery = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let segments = withoutQuery.split(separator: "/", omittingEmptySubsequences: false)
        // "/a/SECRET..." splits into "", "a", "SECRET", ...: everything after "a" goes.
        guard segments.count >= 3, segments[0].isEmpty, segments[1] == "a" else { return withoutQuery }
        return "/a/" + mark
    }

    /// The secrets a request carries: its alert page secret and its bearer token.
    public static func secrets(path: String, authorization: String?) -> [String] {
        var secrets: [String] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        if segments.count >= 2, segments[0] == "a" { secrets.append(String(segments[1])) }
        if let authorization {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            secrets.append(String(parts.count == 2 ? parts[1] : parts.first ?? "").trimmingSpaces)
        }
        return secrets.filter { $0.utf8.count >= 8 }  // a short one would blank out common words
    }

    /// `text` with every occurrence of each secret replaced.
    public static func text(_ text: String, removing secrets: [String]) -> String {
        secrets.reduce(text) { text, secret in text.replacingOccurrences(of: secret, with: mark) }
    }
}
