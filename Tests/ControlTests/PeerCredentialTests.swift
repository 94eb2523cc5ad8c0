import Foundation
import PacerTestSupport
import Testing

@testable import Control

#if canImport(Glibc)
import Glibc
#endif

/// Connects as another user through setpriv (util-linux) and python3, both run as that user:
/// the reply lines python received, or nil when the tools are missing.
private func connectAsOtherUser(_ setprivArguments: [String], socketPath: String) throws -> [String] {
    let script = """
        import json, socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(60)  # ends a hang; not a latency bound (see RawConnection)
        s.connect(sys.argv[1])
        try:
            s.sendall(b'{"id":1,"command":"status"}\\n')
        except OSError:
            pass  # a refused peer may be closed before its request is written
        data = b""
        while True:
            try:
                block = s.recv(65536)
            except ConnectionResetError:
                break
            if not block:
                break
            data += block
            if any('"ok"' in line for line in data.decode().splitlines()):
                break
        sys.stdout.write(data.decode())
        """
    // Output in files and a deadline (BlockingCommand): a pipe could be inherited by another
    // test's child and never reach end of file.
    let result = try BlockingCommand.run(
        "/usr/bin/setpriv", setprivArguments + ["--", "/usr/bin/python3", "-c", script, socketPath],
        environment: ["PATH": "/usr/bin:/bin", "HOME": "/"], timeout: .seconds(60))
    guard result.succeeded else {
        throw PeerTestError(message: "setpriv/python3: \(result)")
    }
    return result.standardOutput.split(separator: "\n").map(String.init)
}

private struct PeerTestError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

private let toolsPresent =
    FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

/// The SO_PEERCRED check. Only root can start a process as another user, hence the condition.
///
/// File permissions normally keep strangers out before the check runs (socket 0660 in a 0750
/// directory). To reach the check at all, these tests open the way on purpose: the temp
/// directory is made 0755 and the socket 0666, so any local user can connect() and only the
/// credential check stands between them and the daemon.
@Suite(
    .enabled(if: isRoot, "needs root to run a client as another uid (setpriv)"),
    .enabled(if: toolsPresent, "needs /usr/bin/setpriv (util-linux) and /usr/bin/python3"),
    .timeLimit(.minutes(10))
)
struct PeerCredentialTests {
    static let allowedGroup: UInt32 = 4242
    static let nobody: UInt32 = 65534

    private func withOpenServer(_ body: (TestServer) async throws -> Void) async throws {
        try await withTestServer(configure: { $0.group = Self.allowedGroup; $0.socketMode = 0o666 }) { server in
            chmod(server.directory.path, 0o755)
            try await body(server)
        }
    }

    @Test func aPeerOutsideTheGroupIsRefused() async throws {
        try await withOpenServer { server in
            let path = server.socketPath
            let lines = try await offPool {
                try connectAsOtherUser(["--reuid=65534", "--regid=65534", "--clear-groups"], socketPath: path)
            }
            #expect(lines.count == 1)
            let reply = try JSONValue(parsing: lines.first ?? "")
            #expect(reply["id"] == .null)
            #expect(reply["ok"] == false)
            #expect(reply["error"]?["code"] == "forbidden")
            #expect(reply["error"]?["message"]?.stringValue?.contains("uid 65534 may not use this socket") == true)
            // The handler never saw it.
            #expect(await server.daemon.lastPeer == nil)
        }
    }

    @Test func aPeerWhosePrimaryGroupIsAllowedIsServed() async throws {
        try await withOpenServer { server in
            let path = server.socketPath
            let lines = try await offPool {
                try connectAsOtherUser(["--reuid=65534", "--regid=4242", "--clear-groups"], socketPath: path)
            }
            let reply = try JSONValue(parsing: lines.first ?? "")
            #expect(reply["ok"] == true)
            #expect(reply["result"]?["uid"]?.intValue == Int(Self.nobody))
            let peer = await server.daemon.lastPeer
            #expect(peer?.uid == Self.nobody)
            #expect(peer?.gid == Self.allowedGroup)
        }
    }

    @Test func aPeerWithTheGroupAsASupplementaryGroupIsServed() async throws {
        try await withOpenServer { server in
            let path = server.socketPath
            let lines = try await offPool {
                try connectAsOtherUser(["--reuid=65534", "--regid=65534", "--groups=100,4242"], socketPath: path)
            }
            let reply = try JSONValue(parsing: lines.first ?? "")
            #expect(reply["ok"] == true)
            #expect(await server.daemon.lastPeer?.gid == Self.nobody)
        }
    }
}

@Suite(.timeLimit(.minutes(10))) struct PeerPolicyTests {
    @Test func rootTheDaemonsUserAndTheGroupAreAllowed() {
        let policy = PeerPolicy(daemonUID: 998, group: 997)
        let noGroups: (ControlPeer) -> [UInt32]? = { _ in [] }
        #expect(policy.allows(ControlPeer(pid: 1, uid: 0, gid: 0), supplementaryGroups: noGroups))
        #expect(policy.allows(ControlPeer(pid: 1, uid: 998, gid: 998), supplementaryGroups: noGroups))
        #expect(policy.allows(ControlPeer(pid: 1, uid: 1000, gid: 997), supplementaryGroups: noGroups))
        #expect(policy.allows(ControlPeer(pid: 1, uid: 1000, gid: 1000), supplementaryGroups: { _ in [27, 997] }))
        #expect(!policy.allows(ControlPeer(pid: 1, uid: 1000, gid: 1000), supplementaryGroups: { _ in [27, 100] }))
        // An unreadable /proc entry (the process is gone) refuses.
        #expect(!policy.allows(ControlPeer(pid: 1, uid: 1000, gid: 1000), supplementaryGroups: { _ in nil }))
        // Without a group only root and the daemon's user get in.
        let ungrouped = PeerPolicy(daemonUID: 998, group: nil)
        #expect(!ungrouped.allows(ControlPeer(pid: 1, uid: 1000, gid: 997), supplementaryGroups: { _ in [997] }))
    }

    @Test func supplementaryGroupsComeFromProcStatus() {
        let status = "Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\nGroups:\t4 24 27 4242 \nNgid:\t0\n"
        #expect(PeerPolicy.supplementaryGroups(fromStatus: status) == [4, 24, 27, 4242])
        #expect(PeerPolicy.supplementaryGroups(fromStatus: "Name:\tx\nGroups:\t\n") == [])
        #expect(PeerPolicy.supplementaryGroups(fromStatus: "Name:\tx\n") == nil)
        // This very process: the line exists and parses.
        #expect(PeerPolicy.supplementaryGroups(ofProcess: getpid()) != nil)
        #expect(PeerPolicy.supplementaryGroups(ofProcess: -1) == nil)
    }
}

/// Under pacerd.service (ProtectProc=invisible) /proc/PID of another user is hidden: the group
/// database must still tell that the peer's user is in the group.
@Suite(.timeLimit(.minutes(10))) struct GroupDatabaseFallbackTests {
    @Test func membershipsComeFromTheGroupDatabase() throws {
        // root (uid 0) is a member of group root (0) in every group database.
        let groups = try #require(SystemGroup.memberships(ofUser: 0, primaryGroup: 0))
        #expect(groups.contains(0))
        #expect(SystemGroup.memberships(ofUser: 4_000_000_000, primaryGroup: 0) == nil)
        // A peer whose process cannot be read (pid 0 here) is judged by its user's groups.
        let peer = ControlPeer(pid: 0, uid: 0, gid: 0)
        #expect(PeerPolicy.supplementaryGroups(of: peer)?.contains(0) == true)
    }
}
