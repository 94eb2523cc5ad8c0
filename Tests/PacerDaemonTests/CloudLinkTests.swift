import Foundation
import PacerTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Linking a real pacerd to an account of a real pacer-cloud by the code its "My devices" page
/// shows: the run pacerd then uploads is the account's; the code works once; the token stays
/// out of logs; `[upload] token` still wins; unlinking revokes the token.
@Suite(.serialized, .timeLimit(.minutes(10))) struct CloudLinkTests {
    /// A browser session on the cloud's pages through curl and a cookie jar.
    struct PageSession {
        let cloud: CloudServer
        let jar: String

        func fetch(_ path: String, form: [String: String]? = nil) throws -> (status: Int, body: String) {
            var arguments = ["-s", "-o", "-", "-w", "\n%{http_code}", "-b", jar, "-c", jar]
            for (name, value) in (form ?? [:]).sorted(by: { $0.key < $1.key }) { arguments += ["--data-urlencode", "\(name)=\(value)"] }
            let result = try DaemonFixture.runBlocking("/usr/bin/curl", arguments + [cloud.url + path])
            var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            let status = Int(lines.popLast() ?? "") ?? 0
            return (status, lines.joined(separator: "\n"))
        }

        /// Posts a form with the csrf field of the page at `formPage`.
        func submit(_ path: String, from formPage: String, _ fields: [String: String] = [:]) throws -> (status: Int, body: String) {
            let page = try fetch(formPage).body
            guard let range = page.range(of: #"name="csrf" value=""#) else { throw FixtureError("no csrf on \(formPage): \(page.prefix(300))") }
            var fields = fields
            fields["csrf"] = String(page[range.upperBound...].prefix { $0 != "\"" })
            return try fetch(path, form: fields)
        }

        /// "Link a device": the code the page shows.
        func newCode() throws -> String {
            let page = try submit("/devices/link", from: "/devices")
            guard page.status == 200, let range = page.body.range(of: #"id="link-code">"#) else {
                throw FixtureError("no link code: \(page.status) \(page.body.prefix(300))")
            }
            return String(page.body[range.upperBound...].prefix { $0 != "<" })
        }
    }

    static func runsSeen(_ cloud: CloudServer, token: String) -> Int? {
        guard let (status, body) = try? CloudServer.get(cloud.url + "/v1/runs", token: token), status == 200 else { return nil }
        return ((try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["runs"] as? [Any])?.count
    }

    @Test func theCodeFromThePageLinksPacerdAndItsRunIsTheAccounts() async throws {
        let cloud = try await offPool { try CloudServer() }
        let password = "a long enough password 42"
        let added = try await DaemonFixture.run("/bin/sh", ["-c", #"printf '%s\n' "$0" | "$1" user add ann@example.org --display-name Ann --confirmed --database "$2""#,
                                                            password, DaemonFixture.binary("pacer-cloud"), cloud.databaseURL])
        #expect(added.status == 0, "\(added.stderr)")
        let pages = PageSession(cloud: cloud, jar: cloud.directory.file("cookies.txt"))
        let login = try await offPool { try pages.submit("/login", from: "/login", ["email": "ann@example.org", "password": password]) }
        #expect(login.status == 303, "\(login.body.prefix(300))")
        let code = try await offPool { try pages.newCode() }

        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        let record = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["replay", "--gps", UploadTests.demoRun, "--record", daemon.databasePath])
        #expect(record.status == 0, "\(record.stderr)")
        try daemon.writeConfig("""
            [voice]
            enabled = false
            [upload]
            allow_http = true
            """)
        try await daemon.start()
        #expect(try await daemon.ctl("cloud").stdout.contains("not linked"))

        // Linked without a restart: the uplink takes the new token and sends the run.
        let linked = try await daemon.ctl("cloud", "link", cloud.url, code.lowercased(), "--name", "ann-pi")
        #expect(linked.status == 0, "\(linked.stderr)")
        #expect(linked.stdout.contains("linked to \(cloud.url) as ann-pi (account Ann)"), "\(linked.stdout)")
        let file = daemon.directory.file("cloud-link.json")
        var info = stat()
        #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let stored = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        let token = try #require(stored?["token"] as? String)
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(100)) { Self.runsSeen(cloud, token: token) == 1 }
        let owners = try await DaemonFixture.run(DaemonFixture.binary("pacer-cloud"), ["device", "list", "--database", cloud.databaseURL])
        let line = try #require(owners.stdout.split(separator: "\n").first { $0.hasPrefix("ann-pi\t") })
        #expect(line.hasSuffix("\tactive\tann@example.org"), "the device, and so its run, is the account's: \(line)")

        // SOS alerts go with the link's token too, so they are the account's as well.
        #expect(try await daemon.ctl("sos", "test").status == 0)
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(100)) {
            guard let (status, body) = try? CloudServer.get(cloud.url + "/v1/alerts", token: token), status == 200 else { return false }
            return ((try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["alerts"] as? [Any])?.count == 1
        }

        // The code worked once.
        let reused = try await daemon.ctl("cloud", "link", cloud.url, code)
        #expect(reused.status != 0 && reused.stderr.contains("used already"), "\(reused.stderr)")
        #expect(try await daemon.ctl("cloud").stdout.contains("as ann-pi"), "a refused link leaves the link as it was")

        // The link survives a restart; `[upload] token` wins over it and `pacerctl cloud` says so.
        #expect(await daemon.stop() == .exited(0))
        try daemon.writeConfig("""
            [voice]
            enabled = false
            [upload]
            url = "\(cloud.url)"
            allow_http = true
            token = "\(cloud.token)"
            """)
        try await daemon.start()
        let overridden = try await daemon.ctl("cloud")
        #expect(overridden.stdout.contains("as ann-pi") && overridden.stdout.contains("[upload] token in the config is set and wins"), "\(overridden.stdout)")
        let overriddenJSON = try await daemon.ctl("cloud", "--json")
        #expect(overriddenJSON.stdout.contains(#""source":"config""#), "\(overriddenJSON.stdout)")

        // Unlinking tells the cloud, which revokes the token.
        let unlinked = try await daemon.ctl("cloud", "unlink")
        #expect(unlinked.status == 0 && unlinked.stdout.contains("the cloud revoked the token"), "\(unlinked.stdout) \(unlinked.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try CloudServer.get(cloud.url + "/v1/runs", token: token).status == 401)
        #expect(try await daemon.ctl("cloud").stdout.contains("not linked"))

        for (where_, text) in [("pacerd", daemon.stderr), ("pacer-cloud", cloud.standardError()), ("pacerctl", linked.stdout + linked.stderr)] {
            for secret in [token, code, code.replacingOccurrences(of: "-", with: "")] {
                #expect(!text.contains(secret), "a secret in \(where_)'s output")
            }
        }
        #expect(await daemon.stop() == .exited(0))
    }

    @Test func badCodesAndURLsAreRefusedAndLeaveNoLink() async throws {
        let cloud = try await offPool { try CloudServer() }
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp(), extraConfig: "[voice]\nenabled = false\n[upload]\nallow_http = true")
        defer { daemon.cleanUp() }
        try await daemon.start()
        let unknown = try await daemon.ctl("cloud", "link", cloud.url, "2345-6789")
        #expect(unknown.status == 64 && unknown.stderr.contains("this link code is not valid"), "\(unknown.stderr)")
        let malformed = try await daemon.ctl("cloud", "link", cloud.url, "hello")
        #expect(malformed.status == 64 && malformed.stderr.contains("'code'"), "\(malformed.stderr)")
        let plain = try await daemon.ctl("cloud", "link", "http://192.0.2.1:8080", "2345-6789")
        #expect(plain.status == 64 && plain.stderr.contains("loopback"), "\(plain.stderr)")
        let nobody = try await daemon.ctl("cloud", "link", "http://127.0.0.1:\(try FreePort.tcp())", "2345-6789")
        #expect(nobody.status == 69 && nobody.stderr.contains("cannot reach"), "\(nobody.stderr)")
        let notLinked = try await daemon.ctl("cloud", "unlink")
        #expect(notLinked.status == 66 && notLinked.stderr.contains("not linked"), "\(notLinked.stderr)")
        #expect(!FileManager.default.fileExists(atPath: daemon.directory.file("cloud-link.json")))
        #expect(await daemon.stop() == .exited(0))
    }
}
