import Foundation
import Glibc
import PacerTestSupport
import Testing
@testable import SOS

@Suite(.timeLimit(.minutes(10))) struct HookChannelTests {
    /// An executable shell script in `dir`.
    static func script(_ dir: TemporaryDirectory, _ body: String, name: String = "hook", mode: mode_t = 0o755) throws -> String {
        let path = dir.file(name)
        // Written through a close-on-exec descriptor: hooks that other tests spawn meanwhile must
        // not inherit it, or exec'ing this script fails with ETXTBSY while they run.
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        try #require(fd >= 0, "cannot create \(path): \(String(cString: strerror(errno)))")
        defer { close(fd) }
        let text = Array(("#!/bin/sh\n" + body + "\n").utf8)
        try #require(text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == text.count)
        return path
    }

    static func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    static func failure(_ result: Result<String, ChannelFailure>) -> String? {
        if case .failure(let failure) = result { return failure.message }
        return nil
    }

    @Test func theHookGetsTheBodyOnStandardInputAndTheEssentialsInItsEnvironment() async throws {
        let dir = try TemporaryDirectory()
        let out = dir.path
        let path = try Self.script(dir, """
            cat > '\(out)/stdin'
            printf '%s' "$PACER_ALERT_ID" > '\(out)/id'
            printf '%s' "$PACER_ALERT_KIND" > '\(out)/kind'
            printf '%s' "$PACER_ALERT_TYPE" > '\(out)/type'
            printf '%s' "$PACER_ALERT_SEQUENCE" > '\(out)/sequence'
            printf '%s' "$PACER_ALERT_TEST" > '\(out)/test'
            printf '%s' "$PACER_ALERT_SMS" > '\(out)/sms'
            printf '%s' "$1|$2" > '\(out)/args'
            exit 0
            """)
        let body = #"{"alert_id":"6b1c","sequence":2,"sms":"SOS update: HIGH heart rate 207 bpm","type":"follow_up"}"#
        let sms = "SOS update: HIGH heart rate 207 bpm, rising (limit 185) 07:37:20 UTC 10 May. https://osm.org/?mlat=45.47750&mlon=9.22410"
        let delivery = makeDelivery(alertUUID: "6b1c2f0e-aaaa-4bbb-8ccc-0123456789ab", kind: "hr_high", test: true, sequence: 2,
                                    type: "follow_up", sms: sms, body: body, target: path)
        let result = await HookChannel(argv: [path, "--urgent", "two words"]).deliver(delivery, timeout: .seconds(10))

        #expect(result == .success("\(path) exited 0"))
        #expect(Self.read(out + "/stdin") == body)
        #expect(Self.read(out + "/id") == "6b1c2f0e-aaaa-4bbb-8ccc-0123456789ab")
        #expect(Self.read(out + "/kind") == "hr_high")
        #expect(Self.read(out + "/type") == "follow_up")
        #expect(Self.read(out + "/sequence") == "2")
        #expect(Self.read(out + "/test") == "1")
        #expect(Self.read(out + "/sms") == sms)
        #expect(Self.read(out + "/args") == "--urgent|two words")

        // Not a test: PACER_ALERT_TEST=0.
        let real = makeDelivery(test: false, sequence: 0, type: "alert", body: "{}")
        #expect(await HookChannel(argv: [path]).deliver(real, timeout: .seconds(10)) == .success("\(path) exited 0"))
        #expect(Self.read(out + "/test") == "0")
        #expect(Self.read(out + "/type") == "alert")
        #expect(Self.read(out + "/sequence") == "0")
        #expect(Self.read(out + "/stdin") == "{}")
    }

    @Test func aBodyLargerThanAPipeArrivesWhole() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.script(dir, "cat > '\(dir.path)/stdin'")
        // 256 KiB: four times a pipe's buffer, so it is fed while the hook reads.
        let body = String(repeating: "0123456789abcdef", count: 16 * 1024)
        let result = await HookChannel(argv: [path]).deliver(makeDelivery(body: body), timeout: .seconds(10))
        #expect(result == .success("\(path) exited 0"))
        #expect(Self.read(dir.file("stdin"))?.count == body.count)
        #expect(Self.read(dir.file("stdin")) == body)
    }

    @Test func aHookThatIgnoresItsInputIsStillAcknowledged() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.script(dir, "exit 0")
        // It exits without reading: the rest of the body meets a closed pipe (EPIPE, not SIGPIPE,
        // which would end this test process).
        let body = String(repeating: "x", count: 512 * 1024)
        #expect(await HookChannel(argv: [path]).deliver(makeDelivery(body: body), timeout: .seconds(10)) == .success("\(path) exited 0"))
    }

    @Test func aNonZeroExitFailsWithTheStatusAndWhatTheHookSaid() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.script(dir, """
            cat > /dev/null
            echo "curl: (7) Failed to connect to relay" >&2
            exit 3
            """)
        let result = await HookChannel(argv: [path]).deliver(makeDelivery(), timeout: .seconds(10))
        let message = try #require(Self.failure(result))
        #expect(message.contains("exited 3"))
        #expect(message.contains("curl: (7) Failed to connect to relay"))
        #expect(message == "\(path) exited 3: curl: (7) Failed to connect to relay")
    }

    @Test func aHookKilledByASignalFails() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.script(dir, "kill -TERM $$")
        let message = try #require(Self.failure(await HookChannel(argv: [path]).deliver(makeDelivery(), timeout: .seconds(10))))
        #expect(message == "\(path) was killed by signal 15")
    }

    @Test func aHookStillRunningAtTheTimeoutIsKilledAndFails() async throws {
        let dir = try TemporaryDirectory()
        let pidFile = dir.file("pid")
        let path = try Self.script(dir, """
            echo $$ > '\(pidFile)'
            sleep 10
            """)
        let started = ContinuousClock.now
        let result = await HookChannel(argv: [path]).deliver(makeDelivery(), timeout: .milliseconds(500))
        let took = ContinuousClock.now - started

        let message = try #require(Self.failure(result))
        #expect(message.contains("did not finish within 0.5 seconds"))
        #expect(message.hasSuffix("killed"))
        #expect(took >= .milliseconds(500))
        // Killed, not finished: the script sleeps 10 s (the margin is for a loaded machine).
        #expect(took < .seconds(10))
        let pidText = try #require(Self.read(pidFile)?.trimmingCharacters(in: .whitespacesAndNewlines))
        let pid = try #require(pid_t(pidText))
        // Killed and reaped: no such process any more (not even a zombie).
        errno = 0
        #expect(kill(pid, 0) == -1)
        #expect(errno == ESRCH)
    }

    @Test func aHookThatNeverReadsABigBodyIsStillTimedOut() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.script(dir, "sleep 10")
        let body = String(repeating: "y", count: 1024 * 1024)
        let started = ContinuousClock.now
        let result = await HookChannel(argv: [path]).deliver(makeDelivery(body: body), timeout: .milliseconds(500))
        // Timed out rather than blocked in the write for ever (the margin is for a loaded machine).
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(Self.failure(result)?.contains("did not finish within") == true)
    }

    @Test func whatTheHookStartedIsKilledWithItAtTheTimeout() async throws {
        let dir = try TemporaryDirectory()
        let childFile = dir.file("child")
        let path = try Self.script(dir, """
            sleep 10 &
            echo $! > '\(childFile)'
            wait
            """)
        let result = await HookChannel(argv: [path]).deliver(makeDelivery(), timeout: .milliseconds(500))
        #expect(Self.failure(result)?.contains("did not finish within") == true)
        let child = try #require(Self.read(childFile).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        defer { kill(child, SIGKILL) }
        // The hook runs in a process group of its own, killed whole: a command it started (curl,
        // sleep) does not live on, orphaned.
        // Killed shows as gone or as a zombie nobody reaped (PID 1 of a container may not).
        try await Task.sleep(for: .milliseconds(200))
        let stat = Self.read("/proc/\(child)/stat") ?? ""
        let state = stat.split(separator: ")").last?.split(separator: " ").first ?? "?"
        #expect(stat.isEmpty || state == "Z", "the hook's child \(child) survived the timeout (state \(state))")
    }

    @Test func aHookThatWritesMuchToStandardErrorIsNotBlocked() async throws {
        let dir = try TemporaryDirectory()
        // 200 KB of diagnostics (curl -v, a stack trace), then success.
        let path = try Self.script(dir, """
            cat > /dev/null
            i=0
            while [ $i -lt 2000 ]; do
                echo "verbose diagnostics line $i ........................................................................" >&2
                i=$((i + 1))
            done
            exit 0
            """)
        let started = ContinuousClock.now
        let result = await HookChannel(argv: [path]).deliver(makeDelivery(), timeout: .seconds(30))
        let took = ContinuousClock.now - started
        // Standard error is read to the end (the first 4 KB kept): the pipe never fills and
        // blocks the hook until the timeout.
        // A blocked hook would be killed at the timeout, a failure; this one exits 0 by itself.
        #expect(result == .success("\(path) exited 0"))
        #expect(took < .seconds(30))
    }

    @Test func aCommandThatCannotBeStartedFailsAtOnce() async throws {
        let dir = try TemporaryDirectory()
        let missing = dir.file("no-such-hook")
        let message = try #require(Self.failure(await HookChannel(argv: [missing]).deliver(makeDelivery(), timeout: .seconds(10))))
        #expect(message.hasPrefix("cannot start \(missing): "))
        #expect(message.contains("No such file or directory"))

        // Not executable.
        let plain = try Self.script(dir, "exit 0", name: "not-executable", mode: 0o644)
        let denied = try #require(Self.failure(await HookChannel(argv: [plain]).deliver(makeDelivery(), timeout: .seconds(10))))
        #expect(denied.hasPrefix("cannot start \(plain): "))
        #expect(denied.contains("Permission denied"))

        #expect(await HookChannel(argv: []).deliver(makeDelivery(), timeout: .seconds(10)) == .failure(ChannelFailure("no hook command")))
    }

    @Test func twoDeliveriesRunInParallel() async throws {
        let dir = try TemporaryDirectory()
        // Each announces itself, then waits (up to 5 s) for the other: run one after the other,
        // the first would give up and fail.
        let path = try Self.script(dir, """
            cat > '\(dir.path)/stdin-'"$PACER_ALERT_ID"
            touch '\(dir.path)/ready-'"$PACER_ALERT_ID"
            if [ "$PACER_ALERT_ID" = a ]; then other=b; else other=a; fi
            i=0
            while [ $i -lt 100 ]; do
                [ -e '\(dir.path)/ready-'"$other" ] && exit 0
                sleep 0.05
                i=$((i + 1))
            done
            echo "never saw $other" >&2
            exit 1
            """)
        let hook = HookChannel(argv: [path])
        async let a = hook.deliver(makeDelivery(alertUUID: "a", body: #"{"alert_id":"a"}"#), timeout: .seconds(20))
        async let b = hook.deliver(makeDelivery(alertUUID: "b", body: #"{"alert_id":"b"}"#), timeout: .seconds(20))
        let (resultA, resultB) = await (a, b)
        #expect(resultA == .success("\(path) exited 0"))
        #expect(resultB == .success("\(path) exited 0"))
        #expect(Self.read(dir.file("stdin-a")) == #"{"alert_id":"a"}"#)
        #expect(Self.read(dir.file("stdin-b")) == #"{"alert_id":"b"}"#)
    }
}
