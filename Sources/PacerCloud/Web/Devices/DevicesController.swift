import CloudModel
import CloudStore
import Foundation
import Hummingbird
import PacerContract

/// "My devices": an account's devices, the one-time code that links a new one
/// (`pacerctl cloud link URL CODE` on the device, which calls `POST /v1/link`), and unlinking.
struct DevicesController: Sendable {
    let devices: DeviceRepository
    /// "https://cloud.example.org": what the page tells the device to link to.
    let linkBase: String
    /// Milliseconds since 1970: when a link code expires.
    let wallClock: @Sendable () -> Int64

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        web.on(.get, "devices", SignedInAccess()) { _, context in try await devicesPage(context) }
        web.on(.post, "devices/link", SignedInAccess()) { request, context in try await newLinkCode(request, context) }
        web.on(.get, "devices/:device/unlink", SignedInAccess()) { _, context in
            let (device, session) = try await ownedDevice(context)
            return WebPage.deviceUnlink.response(values: ["id": device.id, "name": device.name], csrf: session.csrf)
        }
        web.on(.post, "devices/:device/unlink", SignedInAccess()) { request, context in try await unlink(request, context) }
    }

    private func devicesPage(_ context: SignedInContext, code: String? = nil) async throws -> Response {
        let (account, session) = (context.account, context.session)
        let now = wallClock()
        let calendar = RunnerCalendar(account.timezone, nowMs: now)
        let devices = try await self.devices.devices(accountID: account.id).filter { !$0.holdsImports }.map { device -> [String: Any] in
            ["id": device.id, "name": device.name, "linked": !device.revoked,
             "last_seen": device.lastSeenMs.map { calendar.dateTimeAndAge($0) } ?? "not yet"]
        }
        var values: [String: Any] = ["devices": devices]
        if let code {
            values["link"] = ["code": LinkCodes.display(code), "base": linkBase,
                              "until": calendar.clockTime(now + LinkCodes.lifetimeMs, nowMs: now)]
        }
        return WebPage.devices.response(values: values, csrf: session.csrf)
    }

    /// A new code for the signed-in account, shown once; any unused one it had stops working.
    private func newLinkCode(_ request: Request, _ context: SignedInContext) async throws -> Response {
        _ = try await WebForm.read(request, context: context)
        let account = context.account
        let code = LinkCodes.random()
        let now = wallClock()
        try await devices.addLinkCode(hash: LinkCodes.hash(code), accountID: account.id, expiresMs: now + LinkCodes.lifetimeMs, nowMs: now)
        return try await devicesPage(context, code: code)
    }

    /// The signed-in account's device named by the path's id; another's (or none) is 404.
    private func ownedDevice(_ context: SignedInContext) async throws -> (Device, StoredSession) {
        let (account, session) = (context.account, context.session)
        let id = context.parameters.get("device") ?? ""
        guard let device = try await devices.devices(accountID: account.id).first(where: { $0.id == id && !$0.holdsImports }) else {
            throw WebRefusal.plain(.notFound, "device: you have no such device")
        }
        return (device, session)
    }

    private func unlink(_ request: Request, _ context: SignedInContext) async throws -> Response {
        _ = try await WebForm.read(request, context: context)
        let (device, session) = try await ownedDevice(context)
        _ = try await devices.unlinkDevice(id: device.id, accountID: session.accountID)
        context.logger.notice("device \(device.name) unlinked by its account; its token is revoked")
        return Response(status: .seeOther, headers: [.location: "/devices", .cacheControl: "no-store"])
    }
}
