/// The API's paths and the methods each takes, for the 405's `Allow` (the router only says
/// "no route"). Kept beside `CloudRoutes.router()`; a test checks the two agree.
enum RouteTable {
    /// Path patterns ("*" one segment) and their methods.
    static let routes: [(pattern: [String], methods: [String])] = [
        (["health"], ["GET"]),
        (["a", "*"], ["GET"]),
        (["v1", "runs"], ["GET"]),
        (["v1", "runs", "*"], ["GET", "PUT", "DELETE"]),
        (["v1", "runs", "*", "gpx"], ["GET"]),
        (["v1", "runs", "*", "chunks", "*"], ["PUT"]),
        (["v1", "position"], ["GET", "PUT"]),
        (["v1", "alerts"], ["GET", "POST"]),
        (["signup"], ["GET", "POST"]),
        (["confirm"], ["GET", "POST"]),
        (["login"], ["GET", "POST"]),
        (["logout"], ["POST"]),
        (["reset"], ["GET", "POST"]),
        (["reset", "password"], ["GET", "POST"]),
        (["account"], ["GET"]),
        (["account", "delete"], ["GET", "POST"]),
        (["account", "settings"], ["POST"]),
        (["runs"], ["GET"]),
        (["runs", "*"], ["GET"]),
        (["stats"], ["GET"]),
        (["goals"], ["POST"]),
        (["goals", "*"], ["POST"]),
        (["goals", "*", "delete"], ["POST"]),
        (["assets", "*", "*"], ["GET"]),
    ]

    /// The methods `path` takes, or nil when it is no path of the API.
    static func methods(for path: String) -> [String]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        for route in routes where route.pattern.count == segments.count {
            if zip(route.pattern, segments).allSatisfy({ $0 == "*" || $0 == $1 }) { return route.methods }
        }
        return nil
    }
}
