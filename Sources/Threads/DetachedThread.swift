#if canImport(Glibc)
import Glibc
#endif

/// A plain, detached pthread for code that blocks (libgps, evdev reads, poll, fsync): such code
/// must never run on the cooperative pool, which has two threads on this machine and on a Pi.
public enum DetachedThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Starts `body` on a new thread. Throws the errno of pthread_create (EAGAIN: out of threads).
    public static func start(_ body: sending @escaping () -> Void) throws(ThreadStartError) {
        let box = Unmanaged.passRetained(Body(body))
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, box.toOpaque())
        guard status == 0 else {
            box.release()
            throw ThreadStartError(code: status)
        }
        pthread_detach(thread)
    }
}

public struct ThreadStartError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int32
    public var description: String { "cannot start a thread: \(String(cString: strerror(code)))" }
}
