import HTTPClient
import PacerContract
import Store

/// The HTTP request for an outbox item (Sources/PacerCloud/openapi.yaml). All PUTs: the same
/// request twice leaves the server as once.
enum UplinkRequest {
    static func make(_ item: OutboxItem, baseURL: String, token: String?, timeout: Duration) -> HTTPRequest {
        var headers: [(String, String)] = []
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        let path: String
        switch item.kind {
        case .position:
            path = "/v1/position"
            headers.append(("Content-Type", "application/json"))
        case .chunk(let uuid, let sequence):
            path = "/v1/runs/\(uuid)/chunks/\(sequence)"
            headers.append(("Content-Type", TrackChunkFormat.contentType))
            headers.append(("Content-Encoding", "gzip"))
        case .summary(let uuid):
            path = "/v1/runs/\(uuid)"
            headers.append(("Content-Type", "application/json"))
        }
        return HTTPRequest(method: "PUT", url: baseURL + path, headers: headers, body: item.payload, timeout: timeout,
                           connectTimeout: min(timeout, .seconds(10)))
    }

    static func describe(_ item: OutboxItem) -> String {
        switch item.kind {
        case .position: "the live position"
        case .chunk(let uuid, let sequence): "run \(uuid) chunk \(sequence)"
        case .summary(let uuid): "run \(uuid) summary"
        }
    }
}
