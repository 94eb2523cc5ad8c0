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
        (["v1", "device", "sync"], ["GET"]),
        (["v1", "device", "sync", "ack"], ["POST"]),
        (["v1", "device", "state"], ["PUT"]),
        (["v1", "device", "answers"], ["GET"]),
        (["signup"], ["GET", "POST"]),
        (["confirm"], ["GET", "POST"]),
        (["login"], ["GET", "POST"]),
        (["logout"], ["POST"]),
        (["reset"], ["GET", "POST"]),
        (["reset", "password"], ["GET", "POST"]),
        (["account"], ["GET"]),
        (["account", "delete"], ["GET", "POST"]),
        (["v1", "link"], ["POST", "DELETE"]),
        (["devices"], ["GET"]),
        (["devices", "link"], ["POST"]),
        (["devices", "*", "unlink"], ["GET", "POST"]),
        (["monitoring"], ["GET"]),
        (["monitoring", "invite"], ["POST"]),
        (["monitoring", "accept"], ["GET", "POST"]),
        (["monitoring", "end"], ["POST"]),
        (["watch"], ["GET"]),
        (["watch", "events"], ["GET"]),
        (["watch", "alerts", "*", "*", "answer"], ["POST"]),
        (["watch", "devices", "*", "where"], ["POST"]),
        (["watch", "assets", "*"], ["GET"]),
        (["account", "settings"], ["POST"]),
        (["runs"], ["GET"]),
        (["runs", "*"], ["GET"]),
        (["runs", "*", "export.gpx"], ["GET"]),
        (["runs", "*", "export.tcx"], ["GET"]),
        (["runs", "*", "export.fit"], ["GET"]),
        (["import"], ["GET", "POST"]),
        (["stats"], ["GET"]),
        (["heart"], ["GET"]),
        (["goals"], ["POST"]),
        (["goals", "*"], ["POST"]),
        (["goals", "*", "delete"], ["POST"]),
        (["plan"], ["GET"]),
        (["plan", "new"], ["GET"]),
        (["plan", "sessions"], ["POST"]),
        (["plan", "sessions", "*"], ["GET", "POST"]),
        (["plan", "sessions", "*", "delete"], ["POST"]),
        (["plan", "sessions", "*", "done"], ["POST"]),
        (["plan", "sessions", "*", "undone"], ["POST"]),
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
