import Foundation
import Testing
import Threads

@testable import Systemd

#if canImport(Glibc)
import Glibc
#endif

/// sd_notify through the real libsystemd, into a socket this test binds. Each sender is a
/// child process (an exit test) with its own NOTIFY_SOCKET, so no environment variable of
/// the test process changes and parallel tests cannot see each other's notifications.
@Suite(.timeLimit(.minutes(10)))
struct ServiceNotifierTests {
    @Test func datagramText() {
        #expect(ServiceState.datagram([.ready]) == "READY=1")
        #expect(
            ServiceState.datagram([.ready, .status("Idle, GPS no fix")])
                == "READY=1\nSTATUS=Idle, GPS no fix")
        #expect(ServiceState.datagram([.watchdog]) == "WATCHDOG=1")
        #expect(ServiceState.datagram([.stopping]) == "STOPPING=1")
        #expect(
            ServiceState.datagram([.reloading(monotonicMicroseconds: 1_234_567)])
                == "RELOADING=1\nMONOTONIC_USEC=1234567")
    }

    /// A newline in the text would start a new assignment: "…\nREADY=1" must stay text.
    @Test func statusCannotForgeAnotherAssignment() {
        #expect(
            ServiceState.datagram([.status("GPS lost\nREADY=1\r\nSTOPPING=1")])
                == "STATUS=GPS lost READY=1 STOPPING=1")
        #expect(ServiceState.datagram([.status("a\0b")]) == "STATUS=a b")
    }

    @Test func sendsEachStateAsOneDatagram() async throws {
        let directory = try Support.makeTemporaryDirectory()
        defer { Support.removeDirectory(directory) }
        let listener = try DatagramSocket(path: directory + "/notify")
        defer { listener.remove() }

        let before = MonotonicTime.microseconds()
        await #expect(processExitsWith: .success) { [path = listener.path as String] in
            setenv("NOTIFY_SOCKET", path, 1)
            let notifier = ServiceNotifier()
            guard notifier.isEnabled else { exit(2) }
            try notifier.ready(status: "Idle, GPS no fix")
            try notifier.status("Recording run 12: 5.21 km, GPS 3D fix")
            try notifier.watchdog()
            try notifier.reloading()
            try notifier.ready()
            try notifier.stopping(status: "Stopping: run 12 saved")
            // unset_environment is 0: the variable survives for the next notification.
            guard getenv("NOTIFY_SOCKET") != nil else { exit(3) }
        }
        let after = MonotonicTime.microseconds()

        let received = listener.pendingDatagrams().map { String(decoding: $0, as: UTF8.self) }
        try #require(received.count == 6, "\(received)")
        #expect(received[0] == "READY=1\nSTATUS=Idle, GPS no fix")
        #expect(received[1] == "STATUS=Recording run 12: 5.21 km, GPS 3D fix")
        #expect(received[2] == "WATCHDOG=1")
        #expect(received[4] == "READY=1")
        #expect(received[5] == "STOPPING=1\nSTATUS=Stopping: run 12 saved")

        // RELOADING=1 carries the child's CLOCK_MONOTONIC, which is the system's, so it
        // must lie between the parent's readings around the child.
        let reload = received[3].split(separator: "\n").map(String.init)
        try #require(reload.count == 2 && reload[0] == "RELOADING=1", "\(reload)")
        let usec = try #require(
            reload[1].hasPrefix("MONOTONIC_USEC=") ? UInt64(reload[1].dropFirst(15)) : nil)
        #expect(before <= usec && usec <= after)
    }

    @Test func withoutNotifySocketEveryCallIsANoOp() async {
        await #expect(processExitsWith: .success) {
            unsetenv("NOTIFY_SOCKET")
            let notifier = ServiceNotifier()
            guard !notifier.isEnabled else { exit(2) }
            try notifier.ready(status: "Idle")
            try notifier.watchdog()
            try notifier.reloading()
            try notifier.stopping()
        }
    }

    /// A socket that is not there is an error the daemon can log, not a silent success.
    @Test func unreachableSocketThrows() async throws {
        let result = try await #require(
            processExitsWith: .success, observing: [\.standardOutputContent]
        ) {
            setenv("NOTIFY_SOCKET", "/nonexistent-pacer-test/notify", 1)
            do {
                try ServiceNotifier().ready()
                ChildOutput.write("sent")
            } catch {
                let failure = error as? SystemdError
                ChildOutput.write("\(failure?.operation ?? "?") \(failure?.code ?? -1)")
            }
        }
        #expect(result.standardOutputText == "sd_notify \(ENOENT)")
    }
}
