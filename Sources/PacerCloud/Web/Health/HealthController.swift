import Hummingbird

/// What is the same for everyone, outside the session middleware (no session lookup): the
/// liveness probe and the pages' script and style files.
struct HealthController: Sendable {
    /// The run page's (and the other pages') script files.
    let assets: Assets

    func addRoutes(to root: PolicedRoutes<CloudRequestContext>) {
        root.on(.get, "health", PublicAccess(why: "a liveness probe that says nothing")) { _, _ in
            JSONInput.json(Array(#"{"status":"ok"}"#.utf8))
        }
        root.on(.get, "assets/:package/:file", PublicAccess(why: "the run page's script libraries, the same for everyone")) { request, context in
            try assets.response(package: context.parameters.get("package") ?? "", file: context.parameters.get("file") ?? "", request: request)
        }
    }
}
