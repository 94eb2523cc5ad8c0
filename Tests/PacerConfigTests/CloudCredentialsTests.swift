import Testing
@testable import PacerConfig

/// The one answer to "which URL and token does this device use".
@Suite(.timeLimit(.minutes(10))) struct CloudCredentialsTests {
    static let link = CloudLink(url: "https://cloud.example.org", token: "link-token", device: "ann-pi", account: "Ann",
                                linkedAt: "2026-11-25T22:00:00.000Z")

    static func upload(url: String?, token: String?) -> UploadConfiguration {
        var upload = UploadConfiguration()
        upload.url = url
        upload.token = token
        return upload
    }

    @Test func theLinkIsUsedWhenTheConfigSetsNoToken() {
        let used = CloudCredentials.resolve(upload: Self.upload(url: "https://other.example.org", token: nil), link: Self.link)
        #expect(used == CloudCredentials(url: "https://cloud.example.org", token: "link-token", source: .link, linkOverridden: false))
    }

    @Test func uploadTokenWinsOverTheLinkWithItsOwnURL() {
        let used = CloudCredentials.resolve(upload: Self.upload(url: "https://other.example.org", token: "config-token"), link: Self.link)
        #expect(used == CloudCredentials(url: "https://other.example.org", token: "config-token", source: .config, linkOverridden: true))
    }

    @Test func withoutALinkTheConfigIsUsedAsBefore() {
        #expect(CloudCredentials.resolve(upload: Self.upload(url: "https://a.example.org", token: "t"), link: nil)
            == CloudCredentials(url: "https://a.example.org", token: "t", source: .config, linkOverridden: false))
        #expect(CloudCredentials.resolve(upload: Self.upload(url: nil, token: nil), link: nil)
            == CloudCredentials(url: nil, token: nil, source: .config, linkOverridden: false))
    }

    @Test func linkURLsFollowTheUploadURLRules() {
        #expect(CloudLink.urlProblem("https://cloud.example.org", allowPlainHTTP: false) == nil)
        #expect(CloudLink.urlProblem("http://127.0.0.1:8080", allowPlainHTTP: true) == nil)
        #expect(CloudLink.urlProblem("http://127.0.0.1:8080", allowPlainHTTP: false)?.contains("allow_http") == true)
        #expect(CloudLink.urlProblem("http://cloud.example.org", allowPlainHTTP: true)?.contains("loopback") == true)
        #expect(CloudLink.urlProblem("cloud.example.org", allowPlainHTTP: true)?.contains("https://") == true)
        #expect(CloudLink.urlProblem("https://", allowPlainHTTP: false) != nil)
    }
}
