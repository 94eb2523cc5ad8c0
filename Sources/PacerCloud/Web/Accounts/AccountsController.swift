import CloudModel
import CloudStore
import Foundation
import Hummingbird

/// The account pages: sign up, confirm, log in and out, reset the password, the account, and
/// deleting it. Forms post back to their own path; a refusal shows the form again with a 4xx
/// that names the field.
struct AccountsController: Sendable {
    /// Accounts are created and checked through `Accounts`, which takes the store, and an
    /// account is deleted with every feature's rows of it (`CloudStore.deleteAccount`).
    let store: CloudStore
    let sessions: Sessions
    let settings: SessionSettings
    /// The bcrypt cost of new password hashes.
    let passwordCost: UInt8
    /// The relay e-mails go out by; nil: this server sends none.
    let mail: MailSettings?
    /// "https://cloud.example.org": what e-mailed links start with.
    let linkBase: String
    /// Proxies whose X-Forwarded-For is believed, for the attempt limits' client address.
    let trustedProxies: Set<String>
    /// Log-in by account id: a bucket in use is never evicted by other keys (`limitAttempts`).
    let loginAccountLimiter: RateLimiter?
    /// Log-in by the address typed when it has no account: evictable, its keys are made up.
    let loginNoAccountLimiter: RateLimiter?
    let loginAddressLimiter: RateLimiter?
    /// Milliseconds since 1970: what e-mailed links expire by.
    let wallClock: @Sendable () -> Int64
    /// Called after an e-mail is queued, so it goes out now, not at the next poll.
    let wakeForwarder: @Sendable () -> Void

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        let anyone = { (why: String) in PublicAccess(why: why) }
        web.on(.get, "", anyone("sends a browser to its runs, or to the log-in page")) { _, context in home(context) }
        web.on(.get, "signup", anyone("the sign-up form")) { request, context in formPage(.signup, request, context) }
        web.on(.post, "signup", anyone("creating an account needs no account")) { request, context in try await signUp(request, context) }
        web.on(.get, "confirm", anyone("the e-mailed token is the credential; GET only shows the button")) { request, context in
            formPage(.confirm, request, context, values: ["token": request.uri.queryParameters["token"].map(String.init) ?? ""])
        }
        web.on(.post, "confirm", anyone("the e-mailed single-use token is the credential")) { request, context in
            try await confirm(request, context)
        }
        web.on(.get, "login", anyone("the log-in form")) { request, context in
            let next = request.uri.queryParameters["next"].map(String.init).flatMap { Sessions.isLocalPath($0) ? $0 : nil }
            return formPage(.login, request, context, values: next.map { ["next": $0] } ?? [:])
        }
        web.on(.post, "login", anyone("the password is the credential; rate-limited per account and address")) { request, context in
            try await logIn(request, context)
        }
        web.on(.post, "logout", SignedInAccess()) { request, context in try await logOut(request, context) }
        web.on(.get, "reset", anyone("the reset form")) { request, context in formPage(.reset, request, context) }
        web.on(.post, "reset", anyone("answers the same whether or not the address has an account")) { request, context in
            try await requestReset(request, context)
        }
        web.on(.get, "reset/password", anyone("the e-mailed token is the credential; GET only shows the form")) { request, context in
            formPage(.resetPassword, request, context, values: ["token": request.uri.queryParameters["token"].map(String.init) ?? ""])
        }
        web.on(.post, "reset/password", anyone("the e-mailed single-use token is the credential")) { request, context in
            try await resetPassword(request, context)
        }
        web.on(.get, "account", SignedInAccess()) { _, context in try await accountPage(context) }
        web.on(.get, "account/delete", SignedInAccess()) { _, context in WebPage.accountDelete.response(values: [:], csrf: context.session.csrf) }
        web.on(.post, "account/delete", SignedInAccess()) { request, context in try await deleteAccount(request, context) }
        web.on(.post, "account/settings", SignedInAccess()) { request, context in try await saveSettings(request, context) }
    }

    /// A form page. Signed in, its CSRF token is the session's; signed out, the form cookie's
    /// (made now when the browser has none).
    private func formPage(_ page: WebPage, _ request: Request, _ context: CloudRequestContext, values: [String: String] = [:]) -> Response {
        if let session = context.session { return page.response(values: values, csrf: session.csrf) }
        if let existing = request.cookies[Sessions.formCookieName]?.value, Tokens.isWellFormedSecret(existing) {
            return page.response(values: values, csrf: existing)
        }
        let token = Tokens.random()
        return page.response(values: values, csrf: token,
                             extraHeaders: [.setCookie: sessions.cookie(Sessions.formCookieName, value: token, maxAge: nil)])
    }

    private func message(_ title: String, _ text: String, link: (href: String, label: String)? = nil, headers: HTTPFields = [:]) -> Response {
        var values: [String: Any] = ["title": title, "text": text]
        if let link { values["link"] = ["href": link.href, "label": link.label] }
        return WebPage.message.response(values: values, csrf: nil, extraHeaders: headers)
    }

    /// Refuses a form field: the form again with a 400 naming it.
    private func refuse(_ error: AccountInputError, _ page: WebPage, values: [String: String]) -> WebRefusal {
        .form(.badRequest, page: page, message: error.message, values: values)
    }

    private func signUp(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        let values = ["email": form["email"] ?? "", "display_name": form["display_name"] ?? "", "timezone": form["timezone"] ?? ""]
        let password = try form.required("password", page: .signup, values: values)
        let email: String
        switch EmailAddress.normalized(try form.required("email", page: .signup, values: values)) {
        case .success(let address): email = address
        case .failure(let error): throw refuse(error, .signup, values: values)
        }
        // Each sign-up costs a bcrypt hash and may send an e-mail: the log-in limits hold it too.
        let typedZone = (form["timezone"] ?? "").trimmingSpaces
        guard let timezone = typedZone.isEmpty ? "UTC" : TimeZoneNames.canonical(typedZone) else {
            throw WebRefusal.form(.badRequest, page: .signup, message: Self.unknownZone(typedZone), values: values)
        }
        try await limitAttempts(request, context, email: email, what: "sign-up")
        let account: Account
        do {
            account = try await Accounts.create(store: store, email: email, password: password,
                                                displayName: form["display_name"].flatMap { $0.isEmpty ? nil : $0 },
                                                timezone: timezone,
                                                cost: passwordCost)
        } catch let error as AccountInputError {
            throw refuse(error, .signup, values: values)
        } catch is StoreError {
            // The address has an account: its owner hears of the attempt by e-mail, and the page
            // says what it says to a new address, so sign-up does not tell who has an account.
            guard try await mailNotice(to: email, subject: "Your Pacer account",
                                       text: "Someone, perhaps you, tried to create a Pacer account with this address, which has one "
                                           + "already. If it was you, log in at \(linkBase)/login, or choose a new password at "
                                           + "\(linkBase)/reset. If it was not, ignore this e-mail: nothing was changed.") else {
                return message("Account created", "This server sends no e-mail: ask its operator to confirm your account (pacer-cloud user confirm).")
            }
            return message("Check your e-mail", "We sent a link to \(email). Follow it to confirm your address, then log in.")
        }
        guard try await mailLink(to: account, purpose: AccountToken.confirm) else {
            return message("Account created", "This server sends no e-mail: ask its operator to confirm your account (pacer-cloud user confirm).")
        }
        return message("Check your e-mail", "We sent a link to \(account.email). Follow it to confirm your address, then log in.")
    }

    /// Stores a single-use token for the account and queues the e-mail with its link; false when
    /// this server has no mail relay.
    private func mailLink(to account: Account, purpose: String) async throws -> Bool {
        guard let mail = mail else { return false }
        let token = Tokens.random()
        let (lifetime, path, subject, intro) = purpose == AccountToken.confirm
            ? (settings.confirmLinkLifetime, "/confirm", "Confirm your Pacer account", "Confirm your address for Pacer:")
            : (settings.resetLinkLifetime, "/reset/password", "Reset your Pacer password", "Choose a new Pacer password:")
        let hours = max(1, lifetime.milliseconds / 3_600_000)
        let text = "\(intro)\n\n\(linkBase)\(path)?token=\(token)\n\nThe link works once, for \(hours) hours. "
            + "If you did not ask for this, ignore this e-mail."
        let payload = try JSONInput.canonical(Forwarding.Email(from: mail.from, to: account.email, subject: subject, text: text))
        try await store.accounts.addAccountToken(
            AccountToken(hash: Tokens.hash(token), accountID: account.id, purpose: purpose, expiresMs: wallClock() + lifetime.milliseconds),
            mail: OutboxMail(to: account.email, payload: payload))
        wakeForwarder()
        return true
    }

    /// Queues an e-mail without a link; false when this server has no mail relay.
    private func mailNotice(to address: String, subject: String, text: String) async throws -> Bool {
        guard let mail = mail else { return false }
        try await store.outbox.queueMail(OutboxMail(to: address, payload: try JSONInput.canonical(
            Forwarding.Email(from: mail.from, to: address, subject: subject, text: text))))
        wakeForwarder()
        return true
    }

    /// The account the form's token is for, taking the token; a 400 naming it when it is none.
    private func takeToken(_ form: WebForm, purpose: String, page: WebPage) async throws -> String {
        let token = try form.required("token", page: page)
        guard Tokens.isWellFormedSecret(token),
              let accountID = try await store.accounts.takeAccountToken(hash: Tokens.hash(token), purpose: purpose, nowMs: wallClock()) else {
            throw WebRefusal.plain(.badRequest, "token: this link is not valid, was used already or has expired; ask for a new one")
        }
        return accountID
    }

    private func confirm(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        let accountID = try await takeToken(form, purpose: AccountToken.confirm, page: .confirm)
        _ = try await store.accounts.confirmAccount(id: accountID)
        return message("Address confirmed", "You can log in now.", link: ("/login", "Log in"))
    }

    private func logIn(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        // Where the runner was, and what they had typed, when their session ended (`signInAgain`).
        let next = form["next"].flatMap { Sessions.isLocalPath($0) ? $0 : nil }
        let resume = form["resume"].map { WebForm.orderedFields($0).filter { $0.name != "csrf" && !$0.name.contains("password") } } ?? []
        var values = ["email": form["email"] ?? ""]
        values["next"] = next
        if !resume.isEmpty { values["resume"] = Sessions.encode(resume) }
        let password = try form.required("password", page: .login, values: values)
        let email: String
        switch EmailAddress.normalized(try form.required("email", page: .login, values: values)) {
        case .success(let address): email = address
        case .failure(let error): throw refuse(error, .login, values: values)
        }
        try await limitAttempts(request, context, email: email, what: "log-in")
        guard let account = try await Accounts.authenticate(store: store, email: email, password: password, cost: passwordCost) else {
            throw WebRefusal.form(.unauthorized, page: .login, message: "email or password: the address or the password is wrong", values: values)
        }
        guard account.confirmed else {
            throw WebRefusal.form(.forbidden, page: .login, message: "email: confirm this address first, with the link we e-mailed to it",
                                  values: values)
        }
        // A new id at every log-in (no session fixation); the browser's old session, if any, ends.
        if let old = request.cookies[Sessions.cookieName]?.value, Tokens.isWellFormedSecret(old) {
            try await store.accounts.deleteSession(idHash: Tokens.hash(old))
        }
        let (id, started) = try await sessions.start(accountID: account.id)
        // Sessions nobody came back to are deleted here, at the rate people log in.
        try await store.accounts.deleteExpiredSessions(idleBeforeMs: started.createdMs - settings.idle.milliseconds,
                                              createdBeforeMs: started.createdMs - settings.absolute.milliseconds)
        let cookie = sessions.sessionCookie(id: id)
        if let next, !resume.isEmpty {
            let fields = resume.map { ["name": $0.name, "value": $0.value] }
            return WebPage.resume.response(values: ["action": next, "fields": fields], csrf: started.csrf, extraHeaders: [.setCookie: cookie])
        }
        return Response(status: .seeOther, headers: [.location: next ?? "/account", .setCookie: cookie, .cacheControl: "no-store"])
    }

    /// The refusal of a time zone not in the list (`TimeZoneNames`): offsets like "GMT+1" ignore summer time.
    static func unknownZone(_ typed: String) -> String {
        "timezone: '\(typed.prefix(64))' is not in the list: choose the place whose clock you live by, like Europe/Rome (UTC if none)"
    }

    /// `/`: a signed-in browser's runs, else the log-in page.
    private func home(_ context: CloudRequestContext) -> Response {
        Response(status: .seeOther, headers: [.location: context.account == nil ? "/login" : "/runs", .cacheControl: "no-store"])
    }

    /// Log-in, sign-up and reset attempts share one budget per client address (an IPv6 client
    /// by its /64) and per account: 429 past either. An account's budget is kept by its id in a
    /// table that only accounts fill, where no bucket in use is ever dropped, so attempts on
    /// made-up addresses (a `/reset` costs no bcrypt) cannot push it out and reset it. An address
    /// with no account is counted by the address typed, in a table of its own that may drop
    /// buckets; the refusal reads the same either way.
    private func limitAttempts(_ request: Request, _ context: CloudRequestContext, email: String, what: String) async throws {
        let accountID = try await store.accounts.account(email: email)?.account.id
        try limitAttempts(request, peerAddress: context.peerAddress, accountID: accountID, email: email, what: what)
    }

    private func limitAttempts(_ request: Request, peerAddress: String?, accountID: String?, email: String, what: String) throws {
        let forwarded = request.headers.filter { $0.name.canonicalName == "x-forwarded-for" }.map(\.value)
        let address = ClientAddress.resolve(peer: peerAddress, forwardedFor: forwarded, trustedProxies: trustedProxies)
        let account = accountID.map { (loginAccountLimiter, "account " + $0) } ?? (loginNoAccountLimiter, "typed " + email)
        for (limiter, key, source) in [(loginAddressLimiter, "address " + ClientAddress.rateKey(address), "this address"),
                                       (account.0, account.1, "this account")] {
            guard let limiter, case .limited(let seconds) = limiter.take(key) else { continue }
            throw WebRefusal.tooManyAttempts(
                retryAfter: seconds, message: "too many \(what) attempts for \(source): at most \(limiter.limit.phrase); retry after \(seconds) s")
        }
    }

    private func logOut(_ request: Request, _ context: SignedInContext) async throws -> Response {
        _ = try await WebForm.read(request, context: context)
        try await store.accounts.deleteSession(idHash: context.session.idHash)
        return Response(status: .seeOther, headers: [.location: "/login", .setCookie: sessions.clearedSessionCookie(), .cacheControl: "no-store"])
    }

    private func requestReset(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        let values = ["email": form["email"] ?? ""]
        let email: String
        switch EmailAddress.normalized(try form.required("email", page: .reset, values: values)) {
        case .success(let address): email = address
        case .failure(let error): throw refuse(error, .reset, values: values)
        }
        // The log-in limits: reset e-mails cannot be used to flood someone's inbox either.
        try await limitAttempts(request, context, email: email, what: "reset")
        if let stored = try await store.accounts.account(email: email) { _ = try await mailLink(to: stored.account, purpose: AccountToken.reset) }
        return message("Check your e-mail", "If \(email) has an account here, we sent it a link to choose a new password.")
    }

    private func resetPassword(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        let values = ["token": form["token"] ?? ""]
        let password = try form.required("password", page: .resetPassword, values: values)
        // The password is checked before the token is taken: a weak one does not use up the link.
        if let problem = PasswordPolicy.problem(with: password) { throw refuse(problem, .resetPassword, values: values) }
        let accountID = try await takeToken(form, purpose: AccountToken.reset, page: .resetPassword)
        try await store.accounts.setPassword(accountID: accountID, passwordHash: await Passwords.hash(password, cost: passwordCost))
        // Following the e-mailed link proves the address as well as confirming it would.
        _ = try await store.accounts.confirmAccount(id: accountID)
        return message("Password changed", "Every session of your account has ended. Log in with the new password.", link: ("/login", "Log in"),
                       headers: [.setCookie: sessions.clearedSessionCookie()])
    }

    private func accountPage(_ context: SignedInContext) async throws -> Response {
        let (account, session) = (context.account, context.session)
        let devices = try await store.devices.devices(accountID: account.id).filter { !$0.holdsImports }.map { ["name": $0.name] }
        return WebPage.account.response(
            values: ["display_name": account.displayName, "email": account.email, "timezone": account.timezone, "devices": devices,
                     "max_hr": account.maxHeartRate.map(String.init) ?? "", Self.unitChosen(account.units.rawValue): "1"],
            csrf: session.csrf)
    }

    /// The template key that marks `units` chosen in the list ("units_km"; one that marks none
    /// when a form sent something else).
    static func unitChosen(_ units: String) -> String {
        DistanceUnit(rawValue: units).map { "units_" + $0.rawValue } ?? "units_none"
    }

    private func deleteAccount(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        let account = context.account
        let password = try form.required("password", page: .accountDelete)
        // A stolen session must not become unlimited password guesses.
        try limitAttempts(request, peerAddress: context.peerAddress, accountID: account.id, email: account.email, what: "password")
        guard let stored = try await store.accounts.account(email: account.email), await Passwords.verify(password, hash: stored.passwordHash) else {
            throw WebRefusal.form(.unauthorized, page: .accountDelete, message: "password: this is not your password; nothing was deleted")
        }
        _ = try await store.deleteAccount(id: account.id)
        return message("Account deleted", "Your account, its devices and all their runs and alerts are deleted.",
                       headers: [.setCookie: sessions.clearedSessionCookie()])
    }

    private func saveSettings(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        let (account, session) = (context.account, context.session)
        let timezone = (form["timezone"] ?? "").trimmingSpaces
        let maxText = (form["max_hr"] ?? "").trimmingSpaces
        // Absent (an older form, a client): the account's units stay as they are.
        let unitsText = form["units"] ?? account.units.rawValue
        func refuse(_ message: String) -> WebRefusal {
            .form(.badRequest, page: .account, message: message, values: ["display_name": account.displayName, "email": account.email,
                                                                           "timezone": account.timezone, "max_hr": maxText,
                                                                           Self.unitChosen(unitsText): "1"], csrf: session.csrf)
        }
        guard let units = DistanceUnit(rawValue: unitsText) else { throw refuse("units: choose kilometres or miles") }
        guard let timezone = TimeZoneNames.canonical(timezone) else { throw refuse(Self.unknownZone(timezone)) }
        var maxHR: Int?
        if !maxText.isEmpty {
            guard let value = Int(maxText), (100...240).contains(value) else { throw refuse("max_hr: '\(maxText.prefix(10))' is not a heart rate from 100 to 240 bpm") }
            maxHR = value
        }
        try await store.accounts.setAccountSettings(id: account.id, timezone: timezone, maxHeartRate: maxHR, units: units)
        return Response(status: .seeOther, headers: [.location: "/account", .cacheControl: "no-store"])
    }
}
