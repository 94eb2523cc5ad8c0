import PacerContract
import Threads

#if canImport(Glibc)
import Glibc
#endif

/// `[sos] hook`: a local command run for every message, with its JSON on standard input and the
/// essentials in the environment (PACER_ALERT_ID, PACER_ALERT_KIND, PACER_ALERT_TYPE,
/// PACER_ALERT_SEQUENCE, PACER_ALERT_TEST, PACER_ALERT_SMS, and PACER_ALERT_WEARER when the
/// message names the wearer). Exit status 0 acknowledges; a
/// command still running at the timeout is killed and the attempt failed.
public struct HookChannel: AlertChannel {
    public let name = AlertChannelName.hook
    public let argv: [String]

    public init(argv: [String]) {
        self.argv = argv
    }

    public func deliver(_ delivery: Delivery, timeout: Duration) async -> Result<String, ChannelFailure> {
        let argv = self.argv
        return await withCheckedContinuation { continuation in
            do {
                // waitpid blocks: on a thread of its own, never in the cooperative pool.
                try DetachedThread.start {
                    continuation.resume(returning: Self.run(argv, delivery: delivery, timeout: timeout))
                }
            } catch {
                continuation.resume(returning: .failure(ChannelFailure("cannot run the hook: \(error)")))
            }
        }
    }

    static func run(_ argv: [String], delivery: Delivery, timeout: Duration) -> Result<String, ChannelFailure> {
        guard let path = argv.first else { return .failure(ChannelFailure("no hook command")) }
        var input: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        // Pipes made and the hook started under one lock: between pipe() and close-on-exec another
        // hook starting at the same moment would inherit these ends and hold them open.
        spawnLock.lock()
        guard pipe(&input) == 0 else {
            spawnLock.unlock()
            return .failure(ChannelFailure("pipe: \(String(cString: strerror(errno)))"))
        }
        guard pipe(&errors) == 0 else {
            close(input[0]); close(input[1])
            spawnLock.unlock()
            return .failure(ChannelFailure("pipe: \(String(cString: strerror(errno)))"))
        }
        for fd in input + errors { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(errors[0], F_SETFL, fcntl(errors[0], F_GETFL) | O_NONBLOCK)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
        // Nothing else of pacerd's (store, bus, sockets) reaches the hook.
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }

        var environment: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if !text.hasPrefix("PACER_ALERT_") { environment.append(text) }
            index += 1
        }
        environment += [
            "PACER_ALERT_ID=\(delivery.alertUUID)", "PACER_ALERT_KIND=\(delivery.kind)", "PACER_ALERT_TYPE=\(delivery.type)",
            "PACER_ALERT_SEQUENCE=\(delivery.sequence)", "PACER_ALERT_TEST=\(delivery.test ? 1 : 0)", "PACER_ALERT_SMS=\(delivery.sms)",
        ]
        // Who wears the device, when the message names them (`[profile] name`).
        if let wearer = AlertBody.wearer(inJSON: delivery.body) { environment.append("PACER_ALERT_WEARER=\(wearer)") }
        // A hook that exits without reading its input must not SIGPIPE pacerd: blocked on this
        // (the hook's own) thread, the write below fails with EPIPE instead. The child gets a
        // clean mask and default SIGPIPE, as any command expects.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &blocked)
        // Its own process group: at the timeout the hook goes with whatever it started.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var pid: pid_t = 0
        let status = withCStrings(argv) { cArgv in
            withCStrings(environment) { cEnv in
                posix_spawn(&pid, path, &actions, &attributes, cArgv, cEnv)
            }
        }
        close(input[0])
        close(errors[1])
        spawnLock.unlock()
        guard status == 0 else {
            close(input[1]); close(errors[0])
            return .failure(ChannelFailure("cannot start \(path): \(String(cString: strerror(status)))"))
        }
        // Written without blocking, a piece per turn of the wait below: a hook that never reads
        // its input must still be timed out (and one that closes it early is not an error).
        _ = fcntl(input[1], F_SETFL, fcntl(input[1], F_GETFL) | O_NONBLOCK)
        let body = Array(delivery.body.utf8)
        var written = 0
        var inputOpen = true
        func feed() {
            guard inputOpen else { return }
            while written < body.count {
                let n = body[written...].withUnsafeBytes { write(input[1], $0.baseAddress, $0.count) }
                if n > 0 { written += n; continue }
                if n < 0, errno == EAGAIN || errno == EINTR { return }
                break  // EPIPE: the hook closed its input; what it does with that is its business.
            }
            close(input[1])
            inputOpen = false
        }
        feed()
        defer { if inputOpen { close(input[1]) } }

        let deadline = MonotonicTime.nanoseconds() + UInt64(max(0, timeout.components.seconds)) * 1_000_000_000
            + UInt64(max(0, timeout.components.attoseconds) / 1_000_000_000)
        var stderrText: [UInt8] = []
        var waitStatus: Int32 = 0
        while true {
            feed()
            drain(errors[0], into: &stderrText)
            let done = waitpid(pid, &waitStatus, WNOHANG)
            if done == pid { break }
            if done < 0, errno != EINTR {
                // Never read an unknown outcome as success.
                let reason = String(cString: strerror(errno))
                kill(-pid, SIGKILL)
                close(errors[0])
                return .failure(ChannelFailure("cannot wait for \(path): \(reason)"))
            }
            if MonotonicTime.nanoseconds() >= deadline {
                kill(-pid, SIGKILL)
                _ = waitpid(pid, &waitStatus, 0)
                close(errors[0])
                return .failure(ChannelFailure("\(path) did not finish within \(timeout); killed"))
            }
            usleep(10_000)
        }
        drain(errors[0], into: &stderrText)
        close(errors[0])
        let said = Self.trimmed(String(decoding: stderrText.prefix(300), as: UTF8.self))
        // WIFEXITED / WEXITSTATUS, which Swift does not import (macros).
        let exited = waitStatus & 0x7f == 0
        let code = (waitStatus >> 8) & 0xff
        if exited, code == 0 { return .success("\(path) exited 0") }
        let how = exited ? "exited \(code)" : "was killed by signal \(waitStatus & 0x7f)"
        return .failure(ChannelFailure("\(path) \(how)" + (said.isEmpty ? "" : ": \(said)")))
    }

    private static func trimmed(_ text: String) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    /// Reads all there is (a hook writing much must not block on a full pipe); keeps the first 4 KB.
    private static func drain(_ fd: Int32, into buffer: inout [UInt8]) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return }
            if buffer.count < 4096 { buffer += chunk.prefix(min(n, 4096 - buffer.count)) }
        }
    }

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34+), which Swift does not see
    /// (it is behind _GNU_SOURCE); nil where the C library has none.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }
}

/// One hook starts at a time (see `run`).
private let spawnLock = SpawnLock()

private final class SpawnLock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    func lock() { pthread_mutex_lock(&mutex) }
    func unlock() { pthread_mutex_unlock(&mutex) }
}

/// A NULL-terminated char* array for posix_spawn, valid inside `body`.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

