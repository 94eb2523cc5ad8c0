import Foundation
import Hummingbird
import PacerContract

/// "My devices": an account's devices, the one-time code that links a new one
/// (`pacerctl cloud link URL CODE` on the device, which calls `POST /v1/link`), and unlinking.
extension CloudRoutes {
    func addDeviceRoutes(_ web: PolicedRoutes) {
        web.on(.get, "devices", SignedInAccess()) { _, context in try await devicesPage(context) }
        web.on(.post, "devices/link", SignedInAccess()) { request, context in try await newLinkCode(request, context) }
        web.on(.get, "devices/:device/unlink", SignedInAccess()) { _, context in
            let (device, session) = try await ownedDevice(context)
            return WebPage.deviceUnlink.response(values: ["id": device.id, "name": device.name], csrf: session.csrf)
        }
        web.on(.post, "devices/:device/unlink", SignedInAccess()) { request, context in try await unlink(request, context) }
    }

    private func devicesPage(_ context: CloudRequestContext, code: String? = nil) async throws -> Response {
        guard let account = context.account, let session = context.session else { throw WebRefusal.signInFirst }
        let devices = try await store.devices.devices(accountID: account.id).filter { !$0.holdsImports }.map { device -> [String: Any] in
            ["id": device.id, "name": device.name, "linked": !device.revoked,
             "last_seen": device.lastSeenMs.map { Self.minuteText($0) } ?? "not yet"]
        }
        var values: [String: Any] = ["devices": devices]
        if let code {
            values["link"] = ["code": LinkCodes.display(code), "base": linkBase,
                              "until": Self.minuteText(wallClock() + LinkCodes.lifetimeMs)]
        }
        return WebPage.devices.response(values: values, csrf: session.csrf)
    }

    /// "2026-11-25 22:14 UTC".
    static func minuteText(_ milliseconds: Int64) -> String {
        WireTime.text(milliseconds: milliseconds).prefix(16).replacingOccurrences(of: "T", with: " ") + " UTC"
    }

    /// A new code for the signed-in account, shown once; any unused one it had stops working.
    private func newLinkCode(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        _ = try await WebForm.read(request, context: context)
        guard let account = context.account else { throw WebRefusal.signInFirst }
        let code = LinkCodes.random()
        let now = wallClock()
        try await store.devices.addLinkCode(hash: LinkCodes.hash(code), accountID: account.id, expiresMs: now + LinkCodes.lifetimeMs, nowMs: now)
        return try await devicesPage(context, code: code)
    }

    /// The signed-in account's device named by the path's id; another's (or none) is 404.
    private func ownedDevice(_ context: CloudRequestContext) async throws -> (Device, StoredSession) {
        guard let account = context.account, let session = context.session else { throw WebRefusal.signInFirst }
        let id = context.parameters.get("device") ?? ""
        guard let device = try await store.devices.devices(accountID: account.id).first(where: { $0.id == id && !$0.holdsImports }) else {
            throw WebRefusal.plain(.notFound, "device: you have no such device")
        }
        return (device, session)
    }

    private func unlink(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        _ = try await WebForm.read(request, context: context)
        let (device, session) = try await ownedDevice(context)
        _ = try await store.devices.unlinkDevice(id: device.id, accountID: session.accountID)
        context.logger.notice("device \(device.name) unlinked by its account; its token is revoked")
        return Response(status: .seeOther, headers: [.location: "/devices", .cacheControl: "no-store"])
    }

    /// `DELETE /v1/link` (`pacerctl cloud unlink`): the device revokes its own token; its runs
    /// stay its account's.
    func unlinkSelf(context: CloudRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        _ = try await store.devices.revokeDevice(name: device.name)
        context.logger.notice("device \(device.name) unlinked itself; its token is revoked")
        return Response(status: .noContent)
    }

    /// `POST /v1/link`: the code is the credential. Refusals use nothing up and say nothing of
    /// any other account: 400 not a code; one answer (404 `code_invalid`) whether the code is
    /// unknown, used or expired, so a guesser learns nothing of codes it does not hold; 409
    /// `name_unavailable` when the name asked for cannot be this account's, without saying
    /// whose it is.
    func linkDevice(_ request: Request, context: CloudRequestContext) async throws -> Response {
        let input = try JSONInput.decode(DeviceLinkRequest.self, from: try await JSONInput.jsonBody(of: request, context: context))
        guard let code = LinkCodes.normalized(input.code) else {
            throw JSONInput.invalid("code", "is not a link code: 8 letters and digits, as the My devices page shows them (ABCD-EFGH)")
        }
        if let name = input.name, !LinkCodes.isValidDeviceName(name) {
            throw JSONInput.invalid("name", "must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")
        }
        let token = Tokens.random()
        let now = wallClock()
        // A name the cloud picks may be taken already (unlikely): it picks another.
        var attempt = 0
        while true {
            attempt += 1
            let name = input.name ?? "pacer-" + LinkCodes.random().prefix(5).lowercased()
            let device = Device(id: UUID().uuidString.lowercased(), name: name, email: nil, webhook: nil, createdAt: WireTime.text(milliseconds: now))
            switch try await store.devices.linkDevice(codeHash: LinkCodes.hash(code), nowMs: now, device: device, tokenHash: Tokens.hash(token)) {
            case .linked(let linked, let relinked):
                var accountName = ""
                if let id = linked.accountID, let account = try await store.accounts.account(id: id) {
                    accountName = account.displayName.isEmpty ? account.email : account.displayName
                }
                context.logger.notice("device \(linked.name) \(relinked ? "re-linked" : "linked") to account \(linked.accountID ?? "-") by a link code")
                let grant = DeviceLinkGrant(token: token, device: linked.name, account: accountName)
                return try JSONInput.encode(grant, status: relinked ? .ok : .created)
            case .unknownCode, .usedCode, .expiredCode:
                throw APIError(.notFound, "code_invalid",
                               "field 'code': this link code is not valid: mistyped, used already (each works once) or older than "
                                   + "\(LinkCodes.lifetimeMs / 60_000) minutes; press Link a device on the My devices page for a new one")
            case .nameTaken where input.name == nil && attempt < 3:
                continue
            case .nameTaken:
                throw APIError(.conflict, "name_unavailable",
                               "field 'name': this name cannot be given to a device of your account; choose another "
                                   + "(pacerctl cloud link --name NAME), or leave --name out and the cloud picks one")
            }
        }
    }
}
