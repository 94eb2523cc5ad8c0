import CloudModel
import CloudStore
import Foundation
import Hummingbird
import PacerContract

/// Linking a device to an account by the one-time code of the My devices page
/// (`pacerctl cloud link URL CODE`: `POST /v1/link`), and the device unlinking itself.
struct DeviceLinkController: Sendable {
    let devices: DeviceRepository
    let accounts: AccountRepository
    /// Milliseconds since 1970: when a code is used, and the new device's creation time.
    let wallClock: @Sendable () -> Int64

    /// `linking`: `/v1` without a bearer token (the code is the credential), rate-limited per
    /// address; `device`: `/v1` behind the device's token.
    func addRoutes(linking: PolicedRoutes<CloudRequestContext>, device: PolicedRoutes<CloudRequestContext>) {
        linking.on(.post, "link", PublicAccess(why: "the one-time link code in the body is the credential; rate-limited per address")) { request, context in
            try await linkDevice(request, context: context)
        }
        device.on(.delete, "link", DeviceAccess()) { _, context in try await unlinkSelf(context: context) }
    }

    /// `DELETE /v1/link` (`pacerctl cloud unlink`): the device revokes its own token; its runs
    /// stay its account's.
    private func unlinkSelf(context: DeviceContext) async throws -> Response {
        let device = context.device
        _ = try await devices.revokeDevice(name: device.name)
        context.logger.notice("device \(device.name) unlinked itself; its token is revoked")
        return Response(status: .noContent)
    }

    /// `POST /v1/link`: the code is the credential. Refusals use nothing up and say nothing of
    /// any other account: 400 not a code; one answer (404 `code_invalid`) whether the code is
    /// unknown, used or expired, so a guesser learns nothing of codes it does not hold; 409
    /// `name_unavailable` when the name asked for cannot be this account's, without saying
    /// whose it is.
    private func linkDevice(_ request: Request, context: CloudRequestContext) async throws -> Response {
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
            switch try await devices.linkDevice(codeHash: LinkCodes.hash(code), nowMs: now, device: device, tokenHash: Tokens.hash(token)) {
            case .linked(let linked, let relinked):
                var accountName = ""
                if let id = linked.accountID, let account = try await accounts.account(id: id) {
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
