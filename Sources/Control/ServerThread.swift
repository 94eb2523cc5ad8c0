#if canImport(Glibc)
import Glibc
#endif

/// A plain pthread for the server loop: its poll() blocks, which must never happen on the
/// cooperative pool (two threads on a Pi).
enum ServerThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    static func start(_ run: sending @escaping () -> Void) throws(ControlServerError) -> pthread_t {
        let body = Unmanaged.passRetained(Body(run))
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, body.toOpaque())
        guard status == 0 else {
            body.release()
            throw .systemCall("pthread_create", path: nil, errno: status)
        }
        return thread
    }
}
