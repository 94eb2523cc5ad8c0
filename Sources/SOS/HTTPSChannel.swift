import HTTPClient

/// POST of the alert JSON to `{upload.url}/v1/alerts`, acknowledged by a 2xx. The server
/// de-duplicates by `Idempotency-Key` (alert id and sequence), so a retry after a lost answer
/// does not raise a second alert there.
public struct HTTPSChannel: AlertChannel {
    public let name = AlertChannelName.https
    let client: HTTPClient
    /// Asked at each delivery: the token may change while pacerd runs (`pacerctl cloud link`).
    let token: @Sendable () -> String?

    public init(client: HTTPClient, token: String?) {
        self.init(client: client, currentToken: { token })
    }

    public init(client: HTTPClient, currentToken: @escaping @Sendable () -> String?) {
        self.client = client
        self.token = currentToken
    }

    /// The status shown as "server rejects alerts" (its operator must act), or nil for a
    /// failure that passes by itself. 429 (pacer-cloud's rate limit on an alert's updates) and
    /// 408 are the server asking to be tried later, as the retries do: not a rejection.
    static func rejection(_ status: Int) -> Int? {
        (400..<500).contains(status) && status != 408 && status != 429 ? status : nil
    }

    public func deliver(_ delivery: Delivery, timeout: Duration) async -> Result<String, ChannelFailure> {
        var headers = [("Content-Type", "application/json"), ("Idempotency-Key", "\(delivery.alertUUID):\(delivery.sequence)")]
        if let token = token() { headers.append(("Authorization", "Bearer \(token)")) }
        let request = HTTPRequest(method: "POST", url: delivery.key.target, headers: headers, body: Array(delivery.body.utf8),
                                  timeout: timeout, connectTimeout: min(timeout, .seconds(10)))
        do {
            let response = try await client.perform(request)
            guard response.isSuccess else {
                let said = String(decoding: response.body.prefix(200), as: UTF8.self)
                return .failure(ChannelFailure("HTTP \(response.status) from \(delivery.key.target)" + (said.isEmpty ? "" : ": \(said)"),
                                               rejectedStatus: Self.rejection(response.status)))
            }
            return .success("HTTP \(response.status)")
        } catch {
            return .failure(ChannelFailure("\(error)"))
        }
    }
}
