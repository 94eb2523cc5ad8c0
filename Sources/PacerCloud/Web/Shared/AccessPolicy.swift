import Hummingbird
import Synchronization

/// One rule of who may call a route, and the context its handlers get. Every route is
/// registered with one (`PolicedRoutes`), so there is one place to read, and to test, who may
/// do what. The check is the context's own `init(context:)` (a `ChildRequestContext`, which
/// Hummingbird builds before the handler runs): a handler cannot be reached without the
/// identity its rule asks for, nor forget to ask.
protocol AccessPolicy: Sendable {
    /// What the route's handler is given: `CloudRequestContext` for anyone, a child context
    /// with the caller's identity (not optional) for the others.
    associatedtype Context: RequestContext
    /// What the rule is, as the access harness lists it ("public: ...", "device", "signed-in").
    var rule: String { get }
}

/// Anyone, and why that is safe; each public route says so itself.
struct PublicAccess: AccessPolicy {
    typealias Context = CloudRequestContext
    let why: String
    var rule: String { "public: " + why }
}

/// A device, by its bearer token (`DeviceAuthenticator` finds it, `DeviceContext` refuses
/// without it, and what a device reads or writes is always its own: the routes key every query
/// on its id).
struct DeviceAccess: AccessPolicy {
    typealias Context = DeviceContext
    var rule: String { "device" }
}

/// A signed-in account with a live session (`SignedInContext`); the route then shows or changes
/// only that account. Without one: 401, a page with the way to log in.
struct SignedInAccess: AccessPolicy {
    typealias Context = SignedInContext
    var rule: String { "signed-in" }
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

/// A router group whose routes can only be added with a policy, whose context the handler gets.
struct PolicedRoutes<GroupContext: RequestContext> {
    let group: RouterGroup<GroupContext>
    /// The group's path ("/v1"), for the registry.
    let prefix: String
    let registry: AccessRegistry

    /// A route any caller of the group reaches (`PublicAccess`): the handler gets the group's context.
    @discardableResult
    func on<Policy: AccessPolicy, Output: ResponseGenerator>(
        _ method: HTTPRequest.Method, _ path: String, _ policy: Policy,
        use handler: @Sendable @escaping (Request, GroupContext) async throws -> Output
    ) -> Self where Policy.Context == GroupContext {
        registry.record(AccessRegistry.key(method: method, path: prefix + "/" + path), rule: policy.rule)
        group.on(RouterPath(path), method: method, use: handler)
        return self
    }

    /// A route behind an identity: Hummingbird makes the policy's child context of the group's
    /// (`RouterMethods.group(context:)`), whose `init(context:)` throws the refusal, before the
    /// handler runs; after the group's middleware, so it sees what they found.
    @discardableResult
    func on<Policy: AccessPolicy, Output: ResponseGenerator>(
        _ method: HTTPRequest.Method, _ path: String, _ policy: Policy,
        use handler: @Sendable @escaping (Request, Policy.Context) async throws -> Output
    ) -> Self where Policy.Context: ChildRequestContext, Policy.Context.ParentContext == GroupContext {
        registry.record(AccessRegistry.key(method: method, path: prefix + "/" + path), rule: policy.rule)
        group.group(context: Policy.Context.self).on(RouterPath(path), method: method, use: handler)
        return self
    }
}
