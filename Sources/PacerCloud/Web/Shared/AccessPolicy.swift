import Hummingbird
import Synchronization

/// One rule of who may call a route. Every route is registered with one (`PolicedRoutes`), so
/// there is one place to read, and to test, who may do what.
protocol AccessPolicy: Sendable {
    /// What the rule is, as the access harness lists it ("public: ...", "device", "signed-in").
    var rule: String { get }
    /// Throws the refusal when the caller may not go on.
    func authorize(_ request: Request, context: CloudRequestContext) throws
}

/// Anyone, and why that is safe; each public route says so itself.
struct PublicAccess: AccessPolicy {
    let why: String
    var rule: String { "public: " + why }
    func authorize(_ request: Request, context: CloudRequestContext) throws {}
}

/// A device, by its bearer token (`DeviceAuthenticator` puts it in the context, and what a
/// device reads or writes is always its own: the routes key every query on its id).
struct DeviceAccess: AccessPolicy {
    var rule: String { "device" }
    func authorize(_ request: Request, context: CloudRequestContext) throws {
        _ = try context.requireDevice()
    }
}

/// A signed-in account with a live session; the route then shows or changes only that account.
/// Without one: 401, a page with the way to log in.
struct SignedInAccess: AccessPolicy {
    var rule: String { "signed-in" }
    func authorize(_ request: Request, context: CloudRequestContext) throws {
        guard context.account == nil || context.session == nil else { return }
        throw WebRefusal.signInFirst
    }
}

/// Every route and its policy's rule, as registered ("GET /v1/runs" → "device").
public final class AccessRegistry: Sendable {
    private let rules = Mutex<[String: String]>([:])
    public var all: [String: String] { rules.withLock { $0 } }
    func record(_ route: String, rule: String) { rules.withLock { $0[route] = rule } }

    /// The key of a route: its method and Hummingbird's spelling of its path.
    public static func key(method: HTTPRequest.Method, path: String) -> String { "\(method) \(RouterPath(path))" }

    /// The methods the registered routes take on `path` (a parameter matches any one segment),
    /// sorted, or nil when no route has the path: what a 405's `Allow` lists, since the router
    /// itself only says "no route". Read from the registry, so it cannot miss a route.
    public func methods(for path: String) -> [String]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var methods: Set<String> = []
        for key in rules.withLock({ Array($0.keys) }) {
            let parts = key.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let pattern = parts[1].split(separator: "/", omittingEmptySubsequences: true)
            guard pattern.count == segments.count,
                  zip(pattern, segments).allSatisfy({ $0.first == "{" || $0.first == ":" || $0 == "*" || $0 == $1 }) else { continue }
            methods.insert(String(parts[0]))
        }
        return methods.isEmpty ? nil : methods.sorted()
    }
}

/// A router group whose routes can only be added with a policy, asked before the handler runs.
struct PolicedRoutes {
    let group: RouterGroup<CloudRequestContext>
    /// The group's path ("/v1"), for the registry.
    let prefix: String
    let registry: AccessRegistry

    @discardableResult
    func on<Output: ResponseGenerator>(_ method: HTTPRequest.Method, _ path: String, _ policy: some AccessPolicy,
                                       use handler: @Sendable @escaping (Request, CloudRequestContext) async throws -> Output) -> Self {
        registry.record(AccessRegistry.key(method: method, path: prefix + "/" + path), rule: policy.rule)
        group.on(RouterPath(path), method: method) { request, context in
            try policy.authorize(request, context: context)
            return try await handler(request, context)
        }
        return self
    }
}
