import CloudModel
import CloudStore
import Foundation
import Hummingbird
import PacerContract
import Threads

/// An alert's secret page (`/a/{secret}`): the 192-bit secret in the path is the credential;
/// rate-limited per address (`CloudRoutes`).
struct AlertPageController: Sendable {
    let alerts: AlertRepository
    let monitoring: MonitoringRepository
    let devices: DeviceRepository
    let accounts: AccountRepository
    /// The map's tiles and assets, if the pages have a map.
    let map: MapSettings

    func addRoutes(to pages: PolicedRoutes<CloudRequestContext>) {
        pages.on(.get, ":secret", PublicAccess(why: "the 192-bit secret in the path is the credential; rate-limited per address")) { _, context in
            try await alertPage(context: context)
        }
    }

    private func alertPage(context: CloudRequestContext) async throws -> Response {
        let secret = context.parameters.get("secret") ?? ""
        let headers = AlertPage.headers
        guard Tokens.isWellFormedSecret(secret), let read = try await alerts.alert(secret: secret, messages: AlertLimits.pageMessages) else {
            return Response(status: .notFound, headers: headers, body: .init(byteBuffer: ByteBuffer(string: AlertPage.notFound())))
        }
        let (alert, messages) = (read.alert, read.messages)
        let answers = try await monitoring.alertAnswers(device: alert.device, alertID: alert.alertID, newest: AlertLimits.answersShown)
        // Who: the account's display name where the device belongs to one, else what the device
        // sent; the reader of this public page is not known, so times are in the wearer's zone.
        let device = try await devices.device(id: alert.device)
        var runner: Account?
        if let accountID = device?.accountID { runner = try await accounts.account(id: accountID) }
        let decoded = messages.compactMap { try? JSONDecoder().decode(AlertBody.self, from: Data($0.utf8)) }.sorted { $0.sequence < $1.sequence }
        let words = AlertWords(device: device?.name ?? decoded.first?.device ?? "the device", account: runner, messages: decoded)
        let html = AlertPage.html(alert: alert, messages: messages, answers: answers, nowMs: WallClock.milliseconds(), words: words,
                                  map: map, messageCount: read.count)
        return Response(status: .ok, headers: AlertPage.pageHeaders(map: map), body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
