import Control
import HTTPClient
import PacerConfig
import PacerCore
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// `pacerctl cloud`, `cloud link URL CODE`, `cloud unlink`: pacerd exchanges the code for the
/// device's own token (it owns the state directory and the HTTP client), stores it, and hands
/// the uplink and the SOS lane the new credentials, so the link works without a restart.
extension ControlService {
    func cloudStatus() -> JSONValue {
        let link = cloud.link
        let credentials = cloud.credentials
        var reply: [String: JSONValue] = [
            "linked": .bool(link != nil),
            "overridden_by_upload_token": .bool(credentials.linkOverridden),
            "in_use": ["url": credentials.url.map { .string($0) } ?? .null, "source": .string(credentials.source.rawValue),
                       "has_token": .bool(credentials.token != nil)],
        ]
        if let link {
            reply["url"] = .string(link.url)
            reply["device"] = .string(link.device)
            reply["account"] = .string(link.account)
            reply["linked_at"] = .string(link.linkedAt)
        }
        return .object(reply)
    }

    func linkToCloud(_ request: ControlRequest) async throws -> JSONValue {
        let url = String(try request.string("url").reversed().drop(while: { $0 == "/" }).reversed())
        if let problem = CloudLink.urlProblem(url, allowPlainHTTP: cloud.configuration.upload.allowPlainHTTP) {
            throw ControlError.badRequest("url: \(problem)")
        }
        let code = try request.string("code")
        guard !code.isEmpty, code.utf8.count <= 64 else { throw ControlError.badRequest("code: expected the code the My devices page shows") }
        var body: [String: JSONValue] = ["code": .string(code)]
        if let name = try request.optionalString("name") { body["name"] = .string(name) }
        let response = try await callCloud(HTTPRequest(method: "POST", url: url + "/v1/link", headers: [("Content-Type", "application/json")],
                                                       body: Array(JSONValue.object(body).serialized().utf8), timeout: .seconds(20)))
        guard response.isSuccess else { throw Self.refusal(response, url: url) }
        guard let grant = try? JSONValue(parsing: response.body), let token = grant["token"]?.stringValue, !token.isEmpty,
              let device = grant["device"]?.stringValue else {
            throw ControlError.unavailable("\(url) answered \(response.status) without a token: is it a Pacer cloud?")
        }
        let link = CloudLink(url: url, token: token, device: device, account: grant["account"]?.stringValue ?? "",
                             linkedAt: Timestamp(milliseconds: WallClock.milliseconds()).iso8601)
        do {
            try cloud.file.write(link)
        } catch {
            throw ControlError.unavailable("linked, but the token cannot be stored: \(error); link again with a new code")
        }
        cloud.linked(link)
        applyCloudCredentials()
        log(.notice, "upload", "linked to \(url) as device \(device) of \(link.account) by uid \(request.peer.uid)"
            + (cloud.credentials.linkOverridden ? "; [upload] token is set and is still used instead" : ""))
        return cloudStatus()
    }

    func unlinkFromCloud() async throws -> JSONValue {
        guard let link = cloud.link else { throw ControlError.notFound("this device is not linked to a cloud account") }
        // The cloud revokes the token when it can be reached; the link goes here either way.
        var told: String
        do {
            let response = try await callCloud(HTTPRequest(method: "DELETE", url: link.url + "/v1/link",
                                                           headers: [("Authorization", "Bearer \(link.token)")], timeout: .seconds(10)))
            told = response.isSuccess || response.status == 401 ? "the cloud revoked the token" : "the cloud answered \(response.status)"
        } catch {
            told = "the cloud could not be told (\(error.message)); unlink the device on its My devices page"
        }
        do {
            try cloud.file.write(nil)
        } catch {
            throw ControlError.unavailable("\(error)")
        }
        cloud.linked(nil)
        applyCloudCredentials()
        log(.notice, "upload", "unlinked from \(link.url) (device \(link.device)): \(told)")
        guard case .object(var reply) = cloudStatus() else { return cloudStatus() }
        reply["cloud_told"] = .string(told)
        return .object(reply)
    }

    /// The uplink and the SOS lane take the credentials now in force; the uplink tries at once.
    private func applyCloudCredentials() {
        sos.put(.reload(cloud.laneSettings))
        uplink.put(.reload(cloud.uplinkSettings))
        cloudSync.put(.reload(cloud.syncSettings))
    }

    private func callCloud(_ request: HTTPRequest) async throws(ControlError) -> HTTPResponse {
        let client = HTTPClient(configuration: cloud.uplinkSettings.client)
        do {
            return try await client.perform(request)
        } catch {
            throw .unavailable("cannot reach \(request.url): \(error)")
        }
    }

    /// The cloud's refusal, with its message (which names the problem: unknown, used, expired).
    private static func refusal(_ response: HTTPResponse, url: String) -> ControlError {
        let said = (try? JSONValue(parsing: response.body))?["error"]?["message"]?.stringValue
            ?? String(decoding: response.body.prefix(200), as: UTF8.self)
        let message = "\(url) refused the link (HTTP \(response.status)): \(said)"
        switch response.status {
        case 409: return .conflict(message)
        case 400..<500: return .badRequest(message)
        default: return .unavailable(message)
        }
    }
}
