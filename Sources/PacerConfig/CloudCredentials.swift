/// The device's link to an account in the cloud (`pacerctl cloud link URL CODE`): the URL it
/// was linked at and the token the cloud gave for the code, kept in pacerd's state directory
/// (`cloud-link.json`, mode 0600).
public struct CloudLink: Sendable, Equatable {
    public var url: String
    public var token: String
    /// The device's name there and the account it belongs to, as the cloud said.
    public var device: String
    public var account: String
    /// When it was linked, ISO 8601 UTC.
    public var linkedAt: String

    public init(url: String, token: String, device: String, account: String, linkedAt: String) {
        self.url = url
        self.token = token
        self.device = device
        self.account = account
        self.linkedAt = linkedAt
    }

    /// Why `url` cannot be linked to, or nil: the rules of `[upload] url` (https, or http:// to
    /// a loopback address only with `[upload] allow_http = true`).
    public static func urlProblem(_ url: String, allowPlainHTTP: Bool) -> String? {
        let host = url.drop(while: { $0 != "/" }).dropFirst(2).prefix { $0 != "/" }
        guard (url.hasPrefix("https://") || url.hasPrefix("http://")) && !host.isEmpty else {
            return "\"\(url.prefix(200))\" is not a URL starting with https://"
        }
        if url.hasPrefix("http://") && !(UploadConfiguration.isLoopback(url) && allowPlainHTTP) {
            return "plain http:// is only allowed to a loopback address with upload.allow_http = true; use https://"
        }
        return nil
    }
}

/// Which cloud URL and token this device uses: the one answer for the uploader, SOS alerts and
/// anything else that talks to the cloud.
public struct CloudCredentials: Sendable, Equatable {
    public enum Source: String, Sendable {
        /// `[upload] url` and `token` (or no token at all).
        case config
        /// `cloud-link.json`, from `pacerctl cloud link`.
        case link
    }

    /// nil: nothing goes to the cloud.
    public var url: String?
    public var token: String?
    public var source: Source
    /// A link is stored but `[upload] token` is set, which wins.
    public var linkOverridden: Bool

    /// `[upload] token` wins (the operator's explicit choice), with `[upload] url`; else the
    /// link, with the URL it was made at; else `[upload] url` without a token.
    public static func resolve(upload: UploadConfiguration, link: CloudLink?) -> CloudCredentials {
        if let token = upload.token { return CloudCredentials(url: upload.url, token: token, source: .config, linkOverridden: link != nil) }
        if let link { return CloudCredentials(url: link.url, token: link.token, source: .link, linkOverridden: false) }
        return CloudCredentials(url: upload.url, token: nil, source: .config, linkOverridden: false)
    }
}
