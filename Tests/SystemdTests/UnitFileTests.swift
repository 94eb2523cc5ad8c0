import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// systemd/pacerd.service and systemd/pacer.sysusers, checked by systemd's own tools.
@Suite(.enabled(if: Support.tool("systemd-analyze") != nil, "systemd-analyze is not installed"), .timeLimit(.minutes(10)))
struct UnitFileTests {
    static let unit = Support.repositoryFile("systemd/pacerd.service")

    /// The exposure score of the unit as written (`--offline` reads the file, not a running
    /// manager). `--threshold=20` (the scale is 0-100, printed divided by 10) makes the tool
    /// itself fail above 2.0; the printed figure is checked too.
    @Test func securityExposureIsAtMostTwo() async throws {
        let result = try await Support.run(
            Support.tool("systemd-analyze")!,
            ["security", "--offline=true", "--threshold=20", "--no-pager", Self.unit])
        #expect(result.status == 0, "\(result.standardError)")
        let exposure = try #require(
            Self.overallExposure(result.standardOutput), "\(result.standardOutput)")
        #expect(exposure <= 2.0)
    }

    /// `verify` prints warnings and exits 0, so any output at all fails. It also insists that
    /// ExecStart's binary exists. `--root` would need a whole tree (it then also looks for
    /// sysinit.target and /bin/kill inside it), so a copy of the unit whose ExecStart names a
    /// stand-in script is verified against this machine's units instead; nothing else changes.
    @Test func verifyPrintsNothing() async throws {
        let (directory, copy) = try Self.verifiableCopy(Self.unitText())
        defer { Support.removeDirectory(directory) }
        let result = try await Self.verify(copy)
        #expect(result.status == 0)
        #expect(result.standardError == "")
        #expect(result.standardOutput == "")
    }

    /// The check above would pass vacuously if verify printed nothing for any file here.
    @Test func verifyReportsAMistake() async throws {
        let broken = try Self.unitText().replacingOccurrences(
            of: "ProtectHome=yes\n", with: "ProtectHome=yes\nProtectHomes=yes\n")
        let (directory, copy) = try Self.verifiableCopy(broken)
        defer { Support.removeDirectory(directory) }
        let result = try await Self.verify(copy)
        #expect(result.standardError.contains("ProtectHomes"), "\(result.standardError)")
    }

    /// What the daemon needs is still there: a stricter unit could score better by breaking it.
    @Test func grantsWhatTheDaemonNeeds() throws {
        let settings = try Self.serviceSettings(Self.unitText())
        #expect(settings["Type"] == ["notify"])
        #expect(settings["NotifyAccess"] == ["main"])
        #expect(settings["User"] == ["pacer"] && settings["Group"] == ["pacer"])
        #expect(settings["ExecStart"] == ["/usr/bin/pacerd"])
        #expect(settings["ExecReload"] == ["/bin/kill -HUP $MAINPID"])
        #expect(settings["Restart"] == ["on-failure"])
        #expect(settings["WatchdogSec"]?.count == 1)
        #expect(settings["RuntimeDirectory"] == ["pacer"])
        #expect(settings["StateDirectory"] == ["pacer"])
        #expect(settings["ConfigurationDirectory"] == ["pacer"])
        #expect(settings["RestrictAddressFamilies"] == ["AF_UNIX AF_INET AF_INET6"])
        #expect(settings["DeviceAllow"]?.sorted() == ["char-alsa rw", "char-input r"])
        #expect(settings["PrivateDevices"] == nil)  // would hide the sound card
        #expect(settings["PrivateNetwork"] == nil && settings["IPAddressDeny"] == nil)
        #expect(settings["InaccessiblePaths"] == nil)  // /run/dbus must stay reachable
    }

    /// A crash or a watchdog kill is restarted however often it happens (the default start limit,
    /// 5 in 10 s, would give up and leave the runner without SOS); a config error, exit 78, is not
    /// (the same file fails the same way). LifecycleTests checks that pacerd exits 78 on a bad file.
    @Test func restartsAfterCrashesForEverButNotAfterAConfigError() throws {
        let text = try Self.unitText()
        let unit = Self.settings(text, section: "[Unit]")
        let service = try Self.serviceSettings(text)
        #expect(unit["StartLimitIntervalSec"] == ["0"])
        #expect(unit["StartLimitBurst"] == nil)
        #expect(service["Restart"] == ["on-failure"])
        #expect(service["RestartPreventExitStatus"] == [String(try Self.configExitStatus())])
        #expect(service["SuccessExitStatus"] == nil)  // would turn a failure into a clean stop
    }

    /// In [Service] the start limit is ignored with a warning: verifyPrintsNothing catches it there.
    @Test func verifyReportsAMisplacedStartLimit() async throws {
        let moved = try Self.unitText()
            .replacingOccurrences(of: "StartLimitIntervalSec=0\n", with: "")
            .replacingOccurrences(of: "RestartSec=2s\n", with: "RestartSec=2s\nStartLimitIntervalSec=0\n")
        let (directory, copy) = try Self.verifiableCopy(moved)
        defer { Support.removeDirectory(directory) }
        let result = try await Self.verify(copy)
        #expect(result.standardError.contains("Unknown key 'StartLimitIntervalSec' in section [Service]"), "\(result.standardError)")
    }

    /// The sysusers file, applied to an empty root: user and group pacer, pacer in audio.
    @Test(
        .enabled(if: Support.tool("systemd-sysusers") != nil, "systemd-sysusers is not installed"))
    func sysusersCreatesThePacerUser() async throws {
        let root = try Support.makeTemporaryDirectory()
        defer { Support.removeDirectory(root) }
        try FileManager.default.createDirectory(
            atPath: root + "/etc", withIntermediateDirectories: true)
        let result = try await Support.run(
            Support.tool("systemd-sysusers")!,
            ["--root=" + root, Support.repositoryFile("systemd/pacer.sysusers")])
        #expect(result.status == 0, "\(result.standardError)")

        let passwd = try Self.entries(root + "/etc/passwd")
        let group = try Self.entries(root + "/etc/group")
        let user = try #require(passwd["pacer"])
        let pacerGroup = try #require(group["pacer"])
        #expect(user[3] == pacerGroup[2])  // primary group is pacer
        #expect(user[6].hasSuffix("nologin"))
        #expect(Int(user[2]).map { $0 > 0 && $0 < 1000 } == true)  // a system user
        #expect(group["audio"]?[3].split(separator: ",").contains("pacer") == true)
        #expect(group["input"] == nil && group["bluetooth"] == nil)
    }

    // MARK: - Helpers

    static func unitText() throws -> String { try String(contentsOfFile: unit, encoding: .utf8) }

    /// "→ Overall exposure level for pacerd.service: 1.4 OK 🙂" → 1.4
    static func overallExposure(_ output: String) -> Double? {
        for line in output.split(separator: "\n") where line.contains("Overall exposure level for")
        {
            guard let colon = line.lastIndex(of: ":") else { continue }
            let figure = line[line.index(after: colon)...].split(separator: " ").first
            return figure.flatMap { Double($0) }
        }
        return nil
    }

    /// `<tmp>/pacerd.service`, with ExecStart naming `<tmp>/pacerd` (an executable script).
    static func verifiableCopy(_ text: String) throws -> (directory: String, unit: String) {
        let directory = try Support.makeTemporaryDirectory()
        let standIn = directory + "/pacerd"
        try "#!/bin/sh\nexit 0\n".write(toFile: standIn, atomically: true, encoding: .utf8)
        chmod(standIn, 0o755)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var replaced = 0
        let rewritten = lines.map { line -> String in
            guard line == "ExecStart=/usr/bin/pacerd" else { return String(line) }
            replaced += 1
            return "ExecStart=" + standIn
        }
        guard replaced == 1 else {
            Support.removeDirectory(directory)
            throw Unexpected(description: "ExecStart=/usr/bin/pacerd appears \(replaced) times")
        }
        let copy = directory + "/pacerd.service"
        try rewritten.joined(separator: "\n").write(toFile: copy, atomically: true, encoding: .utf8)
        return (directory, copy)
    }

    static func verify(_ unit: String) async throws -> Support.CommandResult {
        try await Support.run(
            Support.tool("systemd-analyze")!, ["verify", "--man=no", "--no-pager", unit])
    }

    /// The [Service] section's settings; a key set twice keeps both values, in order.
    static func serviceSettings(_ text: String) throws -> [String: [String]] {
        settings(text, section: "[Service]")
    }

    /// One section's settings (`wanted` with its brackets); a key set twice keeps both values.
    static func settings(_ text: String, section wanted: String) -> [String: [String]] {
        var settings: [String: [String]] = [:]
        var section = ""
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            if trimmed.hasPrefix("[") {
                section = trimmed
                continue
            }
            guard section == wanted, let equals = trimmed.firstIndex(of: "=") else { continue }
            settings[String(trimmed[..<equals]), default: []].append(
                String(trimmed[trimmed.index(after: equals)...]))
        }
        return settings
    }

    /// pacerd's exit status for a config error, as Sources/PacerDaemon/Daemon.swift defines it
    /// (this suite cannot import PacerDaemon): the unit must name the same number.
    static func configExitStatus() throws -> Int {
        let source = try String(
            contentsOfFile: Support.repositoryFile("Sources/PacerDaemon/Daemon.swift"), encoding: .utf8)
        let prefix = "public static let config: Int32 = "
        for line in source.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix(prefix), let status = Int(trimmed.dropFirst(prefix.count)) { return status }
        }
        throw Unexpected(description: "no `\(prefix)N` in Daemon.swift")
    }

    /// passwd/group lines by name, split on ":".
    static func entries(_ path: String) throws -> [String: [String]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var byName: [String: [String]] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false).map(
                String.init)
            byName[fields[0]] = fields
        }
        return byName
    }
}

struct Unexpected: Error, CustomStringConvertible {
    let description: String
}
