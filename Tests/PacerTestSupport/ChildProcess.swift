import Foundation
import Glibc
import Synchronization

/// A child process for tests: spawned with posix_spawn into its own process group, output to
/// files or /dev/null, stopped by PID and process group (SIGTERM, then SIGKILL), always reaped.
/// Never finds processes by name.
///
/// `terminate()` is the normal way out; dropping the last reference kills (SIGKILL) and reaps
/// whatever is still running, so a failing test leaves nothing behind.
public final class ChildProcess: Sendable {
    public enum Input: Sendable {
        case null
        case inherit
        /// Duplicated onto the child's stdin; the caller keeps (and closes) its own descriptor.
        case descriptor(Int32)
    }

    public enum Output: Sendable {
        case discard
        case inherit
        /// Created or truncated.
        case file(String)
    }

    public enum Status: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        public var description: String {
            switch self {
            case .exited(let code): "exit status \(code)"
            case .signalled(let signal): "killed by signal \(signal)"
            }
        }
    }

    public let executable: String
    public let arguments: [String]
    public let pid: pid_t
    /// The child's own process group (its PID), when it was spawned into one.
    public let processGroup: pid_t?

    private let reaped = Mutex<Status?>(nil)

    /// Spawns `executable` (an absolute path, or a name looked up in PATH) with `arguments`.
    /// `environment` nil inherits this process's environment.
    public init(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        stdin: Input = .null,
        stdout: Output = .discard,
        stderr: Output = .discard,
        newProcessGroup: Bool = true
    ) throws(ChildProcessError) {
        self.executable = executable
        self.arguments = arguments

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch stdin {
        case .null: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .inherit: break
        case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, 0)
        }
        for (target, output) in [(Int32(1), stdout), (Int32(2), stderr)] {
            switch output {
            case .discard: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .inherit: break
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            }
        }
        // Descriptors this test process opened without O_CLOEXEC (another fixture's gate
        // socket, say) must not leak into the child and keep things open behind our back.
        _ = Self.addCloseFrom?(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if newProcessGroup {
            flags |= POSIX_SPAWN_SETPGROUP
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        // Ignored or blocked signals survive exec; the child gets the defaults (SIGTERM works).
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let environmentStrings = (environment ?? ProcessInfo.processInfo.environment)
            .map { "\($0.key)=\($0.value)" }
        let envp = environmentStrings.map { strdup($0) } + [nil]
        defer { for pointer in envp { free(pointer) } }

        var child: pid_t = 0
        let result = executable.contains("/")
            ? posix_spawn(&child, executable, &actions, &attributes, argv, envp)
            : posix_spawnp(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw ChildProcessError(message: "cannot spawn \(executable): \(String(cString: strerror(result)))")
        }
        pid = child
        processGroup = newProcessGroup ? child : nil
    }

    deinit {
        killAndReap()
    }

    /// The exit status once the child has exited (reaping it), nil while it runs.
    public var status: Status? {
        reaped.withLock { status in
            if status == nil { status = Self.reap(pid, blocking: false) }
            return status
        }
    }

    public var isRunning: Bool { status == nil }

    /// Waits up to `timeout` for the child to exit; its status, or nil if it still runs.
    public func waitForExit(timeout: Duration) async -> Status? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status { return status }
            if ContinuousClock.now >= deadline { return nil }
            await Self.nap()
        }
    }

    /// Sends `signal` to the child's process group (or to the child alone if it has none).
    /// Does nothing once the child is reaped, unless group members outlived it.
    public func send(_ signal: Int32) {
        if let processGroup {
            if isRunning || !Self.liveMembers(ofGroup: processGroup).isEmpty { kill(-processGroup, signal) }
        } else if isRunning {
            kill(pid, signal)
        }
    }

    /// SIGTERM to the child (and its group), SIGKILL after `grace`; returns once the child is
    /// reaped and no member of its group is left alive.
    @discardableResult
    public func terminate(grace: Duration = .seconds(3)) async -> Status {
        send(SIGTERM)
        var status = await waitForExit(timeout: grace)
        if status == nil {
            send(SIGKILL)
            status = await waitForExit(timeout: .seconds(60))
        }
        if let processGroup {
            // E.g. gpsd under gpsfake: a grandchild that outlived its parent.
            if await !Self.waitUntilGroupGone(processGroup, timeout: grace) {
                kill(-processGroup, SIGKILL)
                _ = await Self.waitUntilGroupGone(processGroup, timeout: .seconds(10))
            }
        }
        return status ?? killAndReap()
    }

    /// SIGKILL to the child and its group, then a blocking reap. For cleanup paths that cannot
    /// await; SIGKILL cannot be caught, so the wait is short.
    @discardableResult
    public func killAndReap() -> Status {
        if let status { 
            if let processGroup, !Self.liveMembers(ofGroup: processGroup).isEmpty { kill(-processGroup, SIGKILL) }
            return status
        }
        if let processGroup { kill(-processGroup, SIGKILL) } else { kill(pid, SIGKILL) }
        return reaped.withLock { status in
            if status == nil { status = Self.reap(pid, blocking: true) }
            return status ?? .signalled(SIGKILL)
        }
    }

    /// PIDs of processes still alive (not zombies) in process group `group`, from /proc.
    public static func liveMembers(ofGroup group: pid_t) -> [pid_t] {
        // No process at all in the group (the usual case once it is gone): no need to read /proc.
        if kill(-group, 0) != 0, errno == ESRCH { return [] }
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, fields[0] != "Z", fields[0] != "X", pid_t(fields[2]) == group else { return nil }
            return pid
        }
    }

    private static func waitUntilGroupGone(_ group: pid_t, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !liveMembers(ofGroup: group).isEmpty {
            if ContinuousClock.now >= deadline { return false }
            await nap()
        }
        return true
    }

    private static func reap(_ pid: pid_t, blocking: Bool) -> Status? {
        var raw: Int32 = 0
        while true {
            let result = waitpid(pid, &raw, blocking ? 0 : WNOHANG)
            if result == pid { break }
            if result == 0 { return nil }
            if errno == EINTR { continue }
            return .exited(-1)  // ECHILD: not ours any more (reaped elsewhere)
        }
        // WIFEXITED/WEXITSTATUS are macros Swift does not import.
        let signal = raw & 0x7F
        return signal == 0 ? .exited((raw >> 8) & 0xFF) : .signalled(signal)
    }

    /// posix_spawn_file_actions_addclosefrom_np (glibc 2.34+), looked up at run time: Swift's
    /// Glibc module does not import it.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// A short sleep that still sleeps when the task is cancelled (cleanup must finish).
    static func nap() async {
        do {
            try await Task.sleep(for: .milliseconds(10))
        } catch {
            usleep(10_000)
        }
    }
}

public struct ChildProcessError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
