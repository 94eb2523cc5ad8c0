import CloudModel
import CloudStore
import Hummingbird

/// Web sessions: a random id in an HttpOnly, SameSite=Lax cookie (Secure when the public URL is
/// https: behind a TLS proxy the request itself is plain http), kept in the store by its SHA-256
/// so every instance on one database knows it. Expiry is judged on every request.
struct Sessions: Sendable {
    static let cookieName = "pacer_session"
    /// The CSRF token of forms shown before signing in (double-submit: cookie and field must match).
    static let formCookieName = "pacer_form"

    let accounts: AccountRepository
    let settings: SessionSettings
    let secureCookies: Bool
    let nowMs: @Sendable () -> Int64

    /// A new session for the account: its cookie value and the stored row.
    func start(accountID: String) async throws -> (id: String, session: StoredSession) {
        let id = Tokens.random()
        let now = nowMs()
        let session = StoredSession(idHash: Tokens.hash(id), accountID: accountID, csrf: Tokens.random(), createdMs: now, seenMs: now)
        try await accounts.addSession(session)
        return (id, session)
    }

    /// The live session the cookie names; an expired one is deleted and is nil.
    func resume(cookie: String) async throws -> StoredSession? {
        guard Tokens.isWellFormedSecret(cookie) else { return nil }
        let hash = Tokens.hash(cookie)
        guard let session = try await accounts.session(idHash: hash) else { return nil }
        let now = nowMs()
        guard isWithinLimits(session, now: now) else {
            try await accounts.deleteSession(idHash: hash)
            return nil
        }
        if now - session.seenMs >= touchIntervalMs { try await accounts.touchSession(idHash: hash, seenMs: now) }
        return session
    }

    /// How stale the stored last-seen time may get: it is written only when it is this much
    /// older than the request, not at every request. A twentieth of the idle time, at most a
    /// minute: with `--session-idle 60`, every 3 s, so a browser active within 57 s of its last
    /// request is never logged out (a fixed minute logged out every browser of a 60 s idle time).
    var touchIntervalMs: Int64 { min(60_000, settings.idle.milliseconds / 20) }

    /// Within the idle and absolute times, by the stored last-seen time (which is never later
    /// than the real last request: a session is never kept past its idle time).
    func isWithinLimits(_ session: StoredSession, now: Int64) -> Bool {
        now - session.seenMs <= settings.idle.milliseconds && now - session.createdMs <= settings.absolute.milliseconds
    }

    /// Whether the cookie names a live session, without touching it: what an error page (outside
    /// the pages' middleware) asks to choose its nav.
    func isLive(cookie: String) async throws -> Bool {
        guard Tokens.isWellFormedSecret(cookie) else { return false }
        return try await isLive(idHash: Tokens.hash(cookie))
    }

    /// Whether the session is still there and within its idle and absolute times, without
    /// touching it: what a long response (a dashboard's stream) checks as it goes, so that it
    /// ends with the session (log-out, a password reset, expiry) rather than at its own end.
    func isLive(idHash: String) async throws -> Bool {
        guard let session = try await accounts.session(idHash: idHash) else { return false }
        return isWithinLimits(session, now: nowMs())
    }

    func cookie(_ name: String, value: String, maxAge: Duration?) -> String {
        var cookie = "\(name)=\(value); Path=/; HttpOnly; SameSite=Lax"
        if let maxAge { cookie += "; Max-Age=\(maxAge.milliseconds / 1000)" }
        if secureCookies { cookie += "; Secure" }
        return cookie
    }

    func sessionCookie(id: String) -> String { cookie(Self.cookieName, value: id, maxAge: settings.absolute) }
    func clearedSessionCookie() -> String { cookie(Self.cookieName, value: "", maxAge: .zero) }
}

extension Duration {
    var milliseconds: Int64 {
        let (whole, fraction) = components
        return whole * 1000 + fraction / 1_000_000_000_000_000
    }
}

/// Puts the signed-in account, if the session cookie names a live session, into the context.
/// It refuses nothing: the routes' policies (`AccessPolicy`) decide.
struct SessionMiddleware: RouterMiddleware {
    typealias Context = CloudRequestContext
    let sessions: Sessions

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let cookie = request.cookies[Sessions.cookieName]?.value, !cookie.isEmpty,
           let session = try await sessions.resume(cookie: cookie),
           let account = try await sessions.accounts.account(id: session.accountID) {
            context.session = session
            context.account = account
        }
        return try await PageLayout.$viewer.withValue(.init(signedIn: context.account != nil, path: request.uri.path, nowMs: sessions.nowMs(),
                                                          units: context.account?.units ?? .km)) {
            do {
                return try await next(request, context)
            } catch WebRefusal.signInFirst {
                return await sessions.signInAgain(request)
            } catch let refusal as WebRefusal {
                // Rendered here, where the context has the session, so that a form shown again
                // carries the session's CSRF token and the page its nav: the outer middlewares'
                // copy has neither.
                return try refusal.response(from: request, context: context)
            }
        }
    }
}
