import Foundation
import Glibc
import Synchronization
import Threads

/// Real gpsd (Debian 12: gpsd 3.22) fed a receiver log by gpsd's own test harness, gpsfake, on a
/// free port of 127.0.0.1; for tests of anything that reads gpsd.
///
/// gpsfake flags used, and why:
/// - `-P PORT`: gpsd listens on this port (127.0.0.1 and ::1 only), never on 2947.
/// - `-1`: play the log once. With `-p`, gpsfake exits when gpsd reports the device closed at the
///   log's end, taking gpsd with it (the client sees the connection close).
/// - `-p`: pipe mode. gpsfake's own client WATCHes before the first sentence is written and
///   gpsfake waits 1.4 s before feeding; without a watcher gpsd does not open the pty, and what
///   gpsfake writes before that is lost (0.5–4 s of the log, see ../shared/data/README.md 1.3).
///   `-n` (gpsd opens the device at once) would not help: gpsd keeps nothing for clients that
///   connect later.
/// - `-i` (only with `holdUntilReleased`): single-step mode, one line of gpsfake's stdin per
///   sentence. The fixture holds stdin until `release()`, so a test can attach its client first
///   and know that nothing was played before it watches, instead of racing the 1.4 s.
/// - `-c CYCLE`: seconds between sentences; 0 plays as fast as gpsd reads.
/// - `-q`: no progress lines on stderr.
///
/// gpsfake's control socket goes into a private TMPDIR; gpsd's shared-memory export segment
/// (key 0x4770<port>), which gpsd 3.22 never removes, is removed after each stop.
public final class GPSFake: Sendable {
    public struct Options: Sendable {
        /// Seconds between sentences (`-c`); 0 is as fast as gpsd takes them.
        public var cycle: Double
        /// Write nothing to gpsd until `release()`.
        public var holdUntilReleased: Bool
        public var executable: String

        public init(cycle: Double = 0, holdUntilReleased: Bool = false, executable: String = "/usr/bin/gpsfake") {
            self.cycle = cycle
            self.holdUntilReleased = holdUntilReleased
            self.executable = executable
        }
    }

    public let log: String
    public let port: UInt16
    public let options: Options
    public let directory: TemporaryDirectory

    private let state = Mutex(State())
    private let gate = Gate()

    private struct State {
        var process: ChildProcess?
        var runs = 0
        var readyAtNs: UInt64?
    }

    /// Prepares a gpsfake for `log` (NMEA or another receiver log gpsd reads; not gpsd JSON) on
    /// `port`, or a free one. Nothing runs until `start()`.
    public init(log: String, port: UInt16? = nil, options: Options = Options()) throws(ChildProcessError) {
        guard FileManager.default.isReadableFile(atPath: log) else {
            throw ChildProcessError(message: "gpsfake log \(log) is missing or unreadable")
        }
        self.log = log
        if let port {
            self.port = port
        } else {
            self.port = try FreePort.tcp()
        }
        self.options = options
        directory = try TemporaryDirectory(prefix: "pacer-gpsfake")
    }

    deinit {
        closeGate()
        if let process = state.withLock({ $0.process }) {
            process.killAndReap()
            if let group = process.processGroup {
                for _ in 0..<100 where !ChildProcess.liveMembers(ofGroup: group).isEmpty { usleep(10_000) }
            }
        }
        removeSharedMemory()
    }

    /// Starts gpsfake and returns once gpsd accepts connections on `port`.
    public func start(timeout: Duration = .seconds(20)) async throws(ChildProcessError) {
        // gpsfake itself races its gpsd: it connects to gpsd's control socket while gpsd may not
        // be listening yet, and on a loaded machine gives up with "socket error [Errno 111]".
        // That is the harness failing to start, not what a test examines: start it again.
        var attempt = 1
        while true {
            do throws(ChildProcessError) {
                try await startOnce(timeout: timeout)
                return
            } catch {
                guard attempt < 3, error.message.contains("socket error") else { throw error }
                attempt += 1
            }
        }
    }

    private func startOnce(timeout: Duration) async throws(ChildProcessError) {
        let run = state.withLock { state -> Int? in
            if state.process?.isRunning == true { return nil }
            state.runs += 1
            state.readyAtNs = nil
            return state.runs
        }
        guard let run else {
            throw ChildProcessError(message: "gpsfake on port \(port) is running already; stop() or restart() it")
        }
        var arguments = ["-1", "-q", "-p", "-c", String(options.cycle), "-P", String(port)]
        var stdin = ChildProcess.Input.null
        var childEnd: Int32 = -1
        if options.holdUntilReleased {
            var fds: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
                throw ChildProcessError(message: "socketpair: \(String(cString: strerror(errno)))")
            }
            closeGate()
            gate.socket.withLock { $0 = fds[0] }
            childEnd = fds[1]
            stdin = .descriptor(childEnd)
            arguments.append("-i")
        }
        arguments.append(log)
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = directory.path  // gpsfake's control socket, gpsfake-<pid>.sock
        let process: ChildProcess
        do {
            defer { if childEnd >= 0 { close(childEnd) } }
            process = try ChildProcess(
                options.executable, arguments, environment: environment, stdin: stdin,
                stdout: .file(directory.file("gpsfake-\(run).out")),
                stderr: .file(directory.file("gpsfake-\(run).err")))
        }
        state.withLock { $0.process = process }

        let deadline = ContinuousClock.now + timeout
        while !FreePort.isAccepting(port: port) {
            if let status = process.status {
                throw ChildProcessError(
                    message: "gpsfake exited (\(status)) before gpsd accepted connections on port \(port): \(standardError())")
            }
            if ContinuousClock.now >= deadline {
                await process.terminate()
                throw ChildProcessError(message: "gpsd did not accept connections on port \(port) within \(timeout): \(standardError())")
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        let now = MonotonicTime.nanoseconds()
        state.withLock { $0.readyAtNs = now }
    }

    /// CLOCK_MONOTONIC (ns) when the running gpsd was first seen accepting connections (polled
    /// every 5 ms), nil when not started.
    public var readyAtNs: UInt64? { state.withLock { $0.readyAtNs } }

    public var isRunning: Bool { state.withLock { $0.process }?.isRunning ?? false }

    /// With `holdUntilReleased`: lets gpsfake play the log. A background thread answers
    /// gpsfake's per-sentence prompt until the log is played or gpsfake is stopped.
    public func release() {
        // The thread writes through its own duplicate: `stop()` shuts the socket down (ending
        // the thread's send) and closes the original, whose number a restart may then reuse.
        guard let fd = gate.socket.withLock({ $0.map { fcntl($0, F_DUPFD_CLOEXEC, 0) } }), fd >= 0 else { return }
        Thread.detachNewThread {
            let newlines = [UInt8](repeating: 0x0A, count: 4096)
            while true {
                // Blocks while the socket buffer is full, until gpsfake reads or is stopped.
                let sent = newlines.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0 && errno != EINTR { break }
            }
            close(fd)
        }
    }

    /// With `holdUntilReleased`: lets gpsfake play exactly `count` more sentences (one answered
    /// prompt each), so a test can play the log at a pace of its own. Blocks only while the
    /// socket buffer is full. False when there is nothing to release to (stopped, or not held).
    @discardableResult
    public func release(sentences count: Int) -> Bool {
        guard count > 0 else { return true }
        return gate.socket.withLock { fd -> Bool in
            guard let fd else { return false }
            let newlines = [UInt8](repeating: 0x0A, count: count)
            var offset = 0
            while offset < count {
                let sent = newlines[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += sent
            }
            return true
        }
    }

    /// Stops gpsfake and gpsd (SIGTERM to their process group, SIGKILL after `grace`); returns
    /// once neither is left.
    public func stop(grace: Duration = .seconds(3)) async {
        closeGate()
        guard let process = state.withLock({ $0.process }) else { return }
        await process.terminate(grace: grace)
        removeSharedMemory()
    }

    /// Stops the running gpsfake and starts a new one on the same port, with the same log and
    /// options; returns once the new gpsd accepts connections.
    public func restart() async throws(ChildProcessError) {
        await stop()
        try await start()
    }

    /// What the current (or last) gpsfake and gpsd wrote to stderr.
    public func standardError() -> String {
        let run = state.withLock { $0.runs }
        return (try? String(contentsOfFile: directory.file("gpsfake-\(run).err"), encoding: .utf8)) ?? ""
    }

    /// gpsfake's stdout in pipe mode: what its own client got from gpsd (with `-i`, mixed with
    /// its prompts).
    public var pipeOutputPath: String {
        directory.file("gpsfake-\(state.withLock { $0.runs }).out")
    }

    private func closeGate() {
        gate.socket.withLock { fd in
            guard let open = fd else { return }
            // Ends a release thread's send on its duplicate, and tells gpsfake its stdin is over.
            shutdown(open, Int32(SHUT_RDWR))
            close(open)
            fd = nil
        }
    }

    private func removeSharedMemory() {
        // gpsfake sets GPSD_SHM_KEY = 0x4770<port as 4 hex digits>.
        let key = key_t(bitPattern: 0x4770_0000 | UInt32(port))
        let id = shmget(key, 0, 0)
        guard id >= 0 else { return }
        var info = shmid_ds()
        guard shmctl(id, IPC_STAT, &info) == 0, info.shm_nattch == 0 else { return }
        shmctl(id, IPC_RMID, nil)
    }

    /// gpsfake's stdin while it is held: our end of a socket pair.
    private final class Gate: Sendable {
        let socket = Mutex<Int32?>(nil)
    }
}
