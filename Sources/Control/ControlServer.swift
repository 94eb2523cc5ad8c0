#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The daemon's end of the control socket.
///
/// `init` binds and listens, and starts one dedicated thread that accepts, checks each peer
/// (SO_PEERCRED), reads request lines and writes replies, all without blocking (poll). Valid
/// requests go to the handler given to `serve`, which runs on the cooperative pool and may
/// await actors; requests that are not valid are answered by the server thread itself.
///
/// ```swift
/// let server = try ControlServer(configuration: .init(socketPath: path, group: SystemGroup.id(named: "pacer")))
/// await server.serve { request, replies in
///     switch request.command {
///     case "status": return try await daemon.status()
///     case "runs.export":
///         for try await text in store.export(run: try request.int("run")) { try await replies.send(chunk: text) }
///         return nil
///     default: throw ControlError.unknownCommand(request.command)
///     }
/// }
/// ```
///
/// The requests of one connection are handled one at a time, in order; different connections
/// are handled concurrently.
public final class ControlServer: Sendable {
    /// Answers one request: returns the `result` (or nil for a final line without one, after
    /// streamed chunks), or throws a `ControlError` for an error reply. Any other error thrown
    /// becomes an `internal` error reply.
    public typealias Handler = @Sendable (ControlRequest, ControlReplyStream) async throws -> JSONValue?

    private struct State {
        var thread: pthread_t?
        var serving = false
    }

    public let configuration: Configuration
    private let waker: Waker
    private let requests: AsyncStream<PendingRequest>
    private let state = Mutex(State())

    public var socketPath: String { configuration.socketPath }

    public init(configuration: Configuration) throws(ControlServerError) {
        self.configuration = configuration
        let listener = try ListeningSocket.open(configuration)
        do {
            waker = try Waker()
        } catch {
            listener.closeAndRemove()
            throw error
        }
        let (requests, continuation) = AsyncStream.makeStream(of: PendingRequest.self)
        self.requests = requests
        let loop = ServerLoop(
            configuration: configuration, listener: listener, waker: waker, requests: continuation,
            policy: PeerPolicy(daemonUID: geteuid(), group: configuration.group))
        let thread: pthread_t
        do {
            thread = try ServerThread.start { loop.run() }
        } catch {
            listener.closeAndRemove()
            waker.close()
            throw error
        }
        state.withLock { $0.thread = thread }
    }

    deinit {
        stop()
    }

    /// Handles requests until the server stops (or the calling task is cancelled, which stops
    /// it), then waits for the handlers still running. Call it once.
    public func serve(_ handler: @escaping Handler) async {
        let first = state.withLock { state in
            defer { state.serving = true }
            return !state.serving
        }
        guard first else { return }
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for await pending in requests {
                    group.addTask { await Self.answer(pending, with: handler) }
                }
            }
        } onCancel: {
            stop()
        }
    }

    /// Closes the socket and every connection, and removes the socket file. Handlers still
    /// running see their streams closed; their final replies are dropped. Idempotent.
    public func stop() {
        let thread: pthread_t? = state.withLock { state in
            defer { state.thread = nil }
            return state.thread
        }
        guard let thread else { return }
        waker.requestStop()
        pthread_join(thread, nil)
        waker.close()
    }

    private static func answer(_ pending: PendingRequest, with handler: Handler) async {
        let request = pending.request
        let line: [UInt8]
        do {
            let result = try await handler(request, ControlReplyStream(output: pending.output, id: request.id))
            line = ReplyLine.success(id: request.id, result: result)
        } catch let error as ControlError {
            line = ReplyLine.failure(id: request.id, error: error)
        } catch let error as ControlStreamError {
            // The client is gone: nobody reads this line; it only ends the request.
            line = ReplyLine.failure(id: request.id, error: .internalError(error.description))
        } catch {
            line = ReplyLine.failure(id: request.id, error: .internalError("\(request.command) failed: \(error)"))
        }
        pending.output.finishRequest(line)
    }
}

/// A valid request and where its replies go, from the server thread to `serve`.
struct PendingRequest: Sendable {
    let request: ControlRequest
    let output: ConnectionOutput
}
