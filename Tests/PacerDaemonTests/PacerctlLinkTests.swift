import Foundation
import PacerTestSupport
import Testing

/// The package installs /usr/bin/pacerctl as a link to pacerd (one copy of the Swift runtime):
/// started under that name, pacerd must behave exactly as the pacerctl binary does.
@Suite(.timeLimit(.minutes(10))) struct PacerctlLinkTests {
    // Off the test pool: twelve starts of the debug binaries can take half a minute while the
    // suites start side by side, and the pool's threads are what every async test runs on.
    @Test func pacerdStartedAsPacerctlIsPacerctl() async throws {
        try await offPool { try Self.compare() }
    }

    static func compare() throws {
        let dir = try TemporaryDirectory()
        let link = dir.file("pacerctl")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: DaemonFixture.binary("pacerd"))
        let cases: [[String]] = [["--version"], ["--help"], ["bogus"], ["replay", "--gps", "/nonexistent/run.jsonl", "--json"],
                                 ["runs", "list", "--db", dir.file("absent.db")]]
        for arguments in cases {
            let linked = try DaemonFixture.runBlocking(link, arguments)
            let real = try DaemonFixture.runBlocking(DaemonFixture.binary("pacerctl"), arguments)
            #expect(linked.status == real.status, "\(arguments)")
            #expect(linked.stdout == real.stdout, "\(arguments)")
            #expect(linked.stderr == real.stderr, "\(arguments)")
        }
        #expect(try DaemonFixture.runBlocking(link, ["--version"]).stdout == "0.1.0\n")
        // Under its own name it is still the daemon.
        let daemon = try DaemonFixture.runBlocking(DaemonFixture.binary("pacerd"), ["--version"])
        #expect(daemon.status == 0 && daemon.stdout == "pacerd 0.1.0\n")
    }

    /// Without /proc, Swift sees no command line: pacerd says so and stops, under either name,
    /// instead of starting on the defaults (or pacerctl starting the daemon).
    @Test(.enabled(if: canHideProc(), "needs a mount namespace (unshare -m, as root)"))
    func withoutProcTheCommandLineIsMissedAndSaid() async throws {
        try await offPool {
            let dir = try TemporaryDirectory()
            let link = dir.file("pacerctl")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: DaemonFixture.binary("pacerd"))
            for binary in [DaemonFixture.binary("pacerd"), link] {
                let r = try DaemonFixture.runBlocking("/usr/bin/unshare", ["-m", "/bin/sh", "-c", #"umount -l /proc && exec "$0" "$@""#,
                                                                         binary, "--config", dir.file("absent.toml")])
                #expect(r.status == 71, "\(binary): \(r.stderr)")
                #expect(r.stderr == "pacerd: cannot read its command line from /proc/self/cmdline: is /proc mounted?\n")
            }
        }
    }

    static func canHideProc() -> Bool {
        (try? DaemonFixture.runBlocking("/usr/bin/unshare", ["-m", "/bin/sh", "-c", "umount -l /proc"]).status) == 0
    }
}
