import Foundation
import Glibc
import PacerTestSupport
import Testing

/// The process fixture the live gpsd tests stand on. They wait on real processes, so they run
/// with the timed suites (tools/test); the waits are for events, with generous bounds.
@Suite(.timeLimit(.minutes(10)))
struct ChildProcessTests {
    @Test func capturesOutputAndExitStatus() async throws {
        let directory = try TemporaryDirectory()
        let child = try ChildProcess("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"],
                                     stdout: .file(directory.file("out")), stderr: .file(directory.file("err")))
        #expect(await child.waitForExit(timeout: .seconds(10)) == .exited(3))
        #expect(try String(contentsOfFile: directory.file("out"), encoding: .utf8) == "out\n")
        #expect(try String(contentsOfFile: directory.file("err"), encoding: .utf8) == "err\n")
    }

    @Test func aChildIgnoringSIGTERMIsKilledAndReaped() async throws {
        let child = try ChildProcess("/bin/sh", ["-c", "trap '' TERM; sleep 30 & wait; sleep 30"])
        // The trap is set once the shell has started its first `sleep`.
        #expect(await eventually(timeout: .seconds(30)) { ChildProcess.liveMembers(ofGroup: child.pid).count == 2 })
        let status = await child.terminate(grace: .milliseconds(300))
        #expect(status == .signalled(SIGKILL))
        #expect(!child.isRunning)
        #expect(ChildProcess.liveMembers(ofGroup: child.pid).isEmpty)
        #expect(kill(child.pid, 0) == -1)  // reaped: the PID is gone
    }

    @Test func terminateAlsoEndsTheChildsGroup() async throws {
        // The shell's `sleep` is a grandchild in the same group, like gpsd under gpsfake.
        let child = try ChildProcess("/bin/sh", ["-c", "sleep 30 & wait"])
        // Until the shell has started its `sleep` (200 ms was not always enough on a loaded machine).
        #expect(await eventually(timeout: .seconds(30)) { ChildProcess.liveMembers(ofGroup: child.pid).count == 2 })
        await child.terminate()
        #expect(ChildProcess.liveMembers(ofGroup: child.pid).isEmpty)
    }

    /// What hung a full run once: a command's output read through a pipe to its end, while a
    /// process that outlives the command (here its own background child; in the suite, a daemon
    /// another test spawned at that moment) holds the pipe's write end. Through files, the
    /// command is done when it exits.
    @Test func aCommandIsDoneWhenItExitsWhateverHoldsItsOutput() async throws {
        let started = ContinuousClock.now
        let result = try await offPool {
            try BlockingCommand.run("/bin/sh", ["-c", "sleep 60 & echo $!"], timeout: .seconds(30))
        }
        let elapsed = ContinuousClock.now - started
        if let holder = pid_t(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) { kill(holder, SIGKILL) }
        #expect(result.succeeded)
        #expect(elapsed < .seconds(30), "waited \(elapsed) for a command that exited at once")
    }

    /// A command that never ends is killed at its deadline and reported, not waited for.
    @Test func aCommandPastItsDeadlineIsKilledAndReported() async throws {
        let error = await #expect(throws: ChildProcessError.self) {
            try await offPool { try BlockingCommand.run("/bin/sleep", ["60"], timeout: .milliseconds(300)) }
        }
        #expect(error?.message.contains("did not finish within") == true)
    }

    @Test func aMissingExecutableIsAnError() {
        #expect(throws: ChildProcessError.self) { try ChildProcess("/nonexistent/program") }
    }

    @Test func freePortsAreFreeUntilSomethingListens() throws {
        let port = try FreePort.tcp()
        #expect(port > 0)
        #expect(!FreePort.isAccepting(port: port))
    }
}
