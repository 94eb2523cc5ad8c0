import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// systemd/pacer-cloud.service and systemd/pacer-cloud.sysusers, checked by systemd's own tools
/// as pacerd's are (UnitFileTests).
@Suite(.enabled(if: Support.tool("systemd-analyze") != nil, "systemd-analyze is not installed"), .timeLimit(.minutes(10)))
struct CloudUnitFileTests {
    static let unit = Support.repositoryFile("systemd/pacer-cloud.service")
    static let execStart = "ExecStart=/usr/bin/pacer-cloud serve --config /etc/pacer-cloud/pacer-cloud.conf"

    @Test func securityExposureIsAtMostTwo() async throws {
        let result = try await Support.run(
            Support.tool("systemd-analyze")!,
            ["security", "--offline=true", "--threshold=20", "--no-pager", Self.unit])
        #expect(result.status == 0, "\(result.standardError)")
        let exposure = try #require(UnitFileTests.overallExposure(result.standardOutput), "\(result.standardOutput)")
        #expect(exposure <= 2.0)
    }

    @Test func verifyPrintsNothing() async throws {
        let (directory, copy) = try Self.verifiableCopy(Self.unitText())
        defer { Support.removeDirectory(directory) }
        let result = try await UnitFileTests.verify(copy)
        #expect(result.status == 0)
        #expect(result.standardError == "")
        #expect(result.standardOutput == "")
    }

    @Test func verifyReportsAMistake() async throws {
        let broken = try Self.unitText().replacingOccurrences(of: "ProtectHome=yes\n", with: "ProtectHome=yes\nProtectHomes=yes\n")
        let (directory, copy) = try Self.verifiableCopy(broken)
        defer { Support.removeDirectory(directory) }
        let result = try await UnitFileTests.verify(copy)
        #expect(result.standardError.contains("ProtectHomes"), "\(result.standardError)")
    }

    /// What the server needs is still there, and what the package relies on.
    @Test func grantsWhatTheServerNeeds() throws {
        let settings = try UnitFileTests.serviceSettings(Self.unitText())
        #expect(settings["ExecStart"] == [String(Self.execStart.dropFirst("ExecStart=".count))])
        #expect(settings["User"] == ["pacer-cloud"] && settings["Group"] == ["pacer-cloud"])
        #expect(settings["StateDirectory"] == ["pacer-cloud"])
        #expect(settings["ConfigurationDirectory"] == ["pacer-cloud"])
        #expect(settings["ProtectSystem"] == ["strict"])
        #expect(settings["Restart"] == ["on-failure"])
        // The refusal to start without a public URL (exit 78) is not retried forever.
        #expect(settings["RestartPreventExitStatus"]?.first?.split(separator: " ").contains("78") == true)
        #expect(settings["RestrictAddressFamilies"] == ["AF_UNIX AF_INET AF_INET6"])
        #expect(settings["PrivateNetwork"] == nil && settings["IPAddressDeny"] == nil)  // it is a network server
        // The shipped config file: the database in the state directory, a loopback bind.
        let config = try String(contentsOfFile: Support.repositoryFile("config/pacer-cloud.conf"), encoding: .utf8)
        let lines = config.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(lines.contains("database = sqlite:/var/lib/pacer-cloud/cloud.db"))
        #expect(lines.contains("host = 127.0.0.1"))
    }

    /// The sysusers file, applied to an empty root: user and group pacer-cloud, in no other group.
    @Test(.enabled(if: Support.tool("systemd-sysusers") != nil, "systemd-sysusers is not installed"))
    func sysusersCreatesTheUser() async throws {
        let root = try Support.makeTemporaryDirectory()
        defer { Support.removeDirectory(root) }
        try FileManager.default.createDirectory(atPath: root + "/etc", withIntermediateDirectories: true)
        let result = try await Support.run(
            Support.tool("systemd-sysusers")!, ["--root=" + root, Support.repositoryFile("systemd/pacer-cloud.sysusers")])
        #expect(result.status == 0, "\(result.standardError)")
        let passwd = try UnitFileTests.entries(root + "/etc/passwd")
        let group = try UnitFileTests.entries(root + "/etc/group")
        let user = try #require(passwd["pacer-cloud"])
        #expect(user[3] == group["pacer-cloud"]?[2])
        #expect(user[6].hasSuffix("nologin"))
        #expect(Int(user[2]).map { $0 > 0 && $0 < 1000 } == true)
        #expect(group.values.allSatisfy { $0[0] == "pacer-cloud" || !$0[3].split(separator: ",").contains("pacer-cloud") })
    }

    static func unitText() throws -> String { try String(contentsOfFile: unit, encoding: .utf8) }

    /// `<tmp>/pacer-cloud.service` whose ExecStart names `<tmp>/pacer-cloud` (verify insists that
    /// the binary exists), nothing else changed.
    static func verifiableCopy(_ text: String) throws -> (directory: String, unit: String) {
        let directory = try Support.makeTemporaryDirectory()
        let standIn = directory + "/pacer-cloud"
        try "#!/bin/sh\nexit 0\n".write(toFile: standIn, atomically: true, encoding: .utf8)
        chmod(standIn, 0o755)
        guard text.components(separatedBy: execStart + "\n").count == 2 else {
            Support.removeDirectory(directory)
            throw Unexpected(description: "\(execStart) does not appear exactly once")
        }
        let copy = directory + "/pacer-cloud.service"
        try text.replacingOccurrences(of: "ExecStart=/usr/bin/pacer-cloud ", with: "ExecStart=\(standIn) ")
            .write(toFile: copy, atomically: true, encoding: .utf8)
        return (directory, copy)
    }
}
