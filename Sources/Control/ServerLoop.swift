#if canImport(Glibc)
import Glibc
#endif

/// The server thread: one poll() over the wake pipe, the listening socket and every connection.
/// Nothing here blocks: reads and writes are non-blocking, and a client that stops reading is
/// dropped after the write timeout instead of holding anything up.
final class ServerLoop {
    private let configuration: ControlServer.Configuration
    private let listener: ListeningSocket
    private let waker: Waker
    private let requests: AsyncStream<PendingRequest>.Continuation
    private let policy: PeerPolicy
    private var connections: [Connection] = []
    /// After accept() fails with EMFILE and the like, the listener is left alone for a moment
    /// rather than polled in a busy loop.
    private var acceptPausedUntil: ContinuousClock.Instant?
    private var readBuffer = [UInt8](repeating: 0, count: 16 * 1024)

    init(
        configuration: ControlServer.Configuration, listener: ListeningSocket, waker: Waker,
        requests: AsyncStream<PendingRequest>.Continuation, policy: PeerPolicy
    ) {
        self.configuration = configuration
        self.listener = listener
        self.waker = waker
        self.requests = requests
        self.policy = policy
    }

    func run() {
        while !waker.stopRequested {
            if let pause = acceptPausedUntil, ContinuousClock.now >= pause { acceptPausedUntil = nil }
            let listening = acceptPausedUntil == nil && connections.count < configuration.maximumConnections
            var descriptors = [pollfd(fd: waker.readEnd, events: Int16(POLLIN), revents: 0)]
            if listening { descriptors.append(pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)) }
            let polled = connections
            for connection in polled {
                var events: Int32 = 0
                if connection.wantsInput { events |= Int32(POLLIN) }
                if connection.output.hasUnsent { events |= Int32(POLLOUT) }
                descriptors.append(pollfd(fd: connection.fd, events: Int16(events), revents: 0))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), pollTimeoutMilliseconds())
            if ready < 0 {
                if errno == EINTR { continue }
                // Only EFAULT/EINVAL/ENOMEM: nothing sensible is left to do but stop serving.
                break
            }
            if descriptors[0].revents != 0 { waker.drain() }
            if listening && descriptors[1].revents != 0 { acceptClients() }
            let first = listening ? 2 : 1
            for (index, connection) in polled.enumerated() {
                handleEvents(Int32(descriptors[first + index].revents), on: connection)
            }
            for connection in connections where !connection.isClosed {
                service(connection)
            }
            connections.removeAll { $0.isClosed }
        }
        shutDown()
    }

    // MARK: Accepting

    private func acceptClients() {
        while connections.count < configuration.maximumConnections {
            let fd = accept(listener.fd, nil, nil)
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED: continue
                case EAGAIN, EWOULDBLOCK: return
                default:
                    acceptPausedUntil = ContinuousClock.now + .milliseconds(200)
                    return
                }
            }
            // accept4(SOCK_CLOEXEC) is not exposed by Glibc's module map; a fork() between these
            // two calls could leak the descriptor into a child, which the daemon does not do here.
            Syscalls.setCloseOnExec(fd)
            guard Syscalls.setNonBlocking(fd), let peer = Syscalls.peerCredentials(fd) else {
                Glibc.close(fd)
                continue
            }
            guard policy.allows(peer, supplementaryGroups: PeerPolicy.supplementaryGroups(of:)) else {
                refuse(fd, peer: peer)
                continue
            }
            connections.append(
                Connection(fd: fd, peer: peer, output: ConnectionOutput(limit: configuration.replyBufferLimit, waker: waker)))
        }
    }

    /// One error line, then close. It fits in a fresh socket's buffer, so one send() does it.
    private func refuse(_ fd: Int32, peer: ControlPeer) {
        let groupText = policy.group.map { group in
            SystemGroup.name(ofID: group).map { "group \($0)" } ?? "gid \(group)"
        }
        let message = "uid \(peer.uid) may not use this socket: it is for root, the daemon's user"
            + (groupText.map { " and members of \($0)" } ?? "")
        let line = ReplyLine.failure(id: .null, error: .forbidden(message))
        _ = line.withUnsafeBytes { Syscalls.sendNow(fd, $0) }
        Glibc.close(fd)
    }

    // MARK: Connections

    private func handleEvents(_ revents: Int32, on connection: Connection) {
        guard !connection.isClosed, revents != 0 else { return }
        if revents & Int32(POLLIN) != 0 {
            readInput(connection)
        }
        // POLLHUP on a Unix stream socket: the peer closed both directions; nobody will read
        // our replies. (A half-close, as `socat` does after its input ends, is POLLIN with EOF.)
        if revents & (Int32(POLLHUP) | Int32(POLLERR) | Int32(POLLNVAL)) != 0 && !connection.isClosed {
            close(connection, reason: "client disconnected")
        }
    }

    private func readInput(_ connection: Connection) {
        guard connection.wantsInput else { return }
        let count = readBuffer.withUnsafeMutableBytes { read(connection.fd, $0.baseAddress, $0.count) }
        if count > 0 {
            connection.input.append(contentsOf: readBuffer[0..<count])
        } else if count == 0 {
            connection.inputEnded = true
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            close(connection, reason: "read failed: \(Syscalls.errorText(errno))")
        }
    }

    /// Starts the next request if none is running, writes what is queued, and closes the
    /// connection when it is finished or stuck.
    private func service(_ connection: Connection) {
        if connection.output.takeRequestFinished() { connection.requestRunning = false }
        processInput(connection)
        flush(connection)
        guard !connection.isClosed else { return }
        let finished = connection.inputEnded || connection.closeWhenFlushed
        if finished && !connection.requestRunning && !connection.output.hasUnsent {
            close(connection, reason: "connection closed")
        }
    }

    private func processInput(_ connection: Connection) {
        while !connection.requestRunning && !connection.closeWhenFlushed {
            let line: ArraySlice<UInt8>
            if let newline = connection.input[connection.inputStart...].firstIndex(of: UInt8(ascii: "\n")) {
                line = connection.input[connection.inputStart..<newline]
                connection.inputStart = newline + 1
            } else if connection.inputEnded && connection.inputStart < connection.input.count {
                // The last request may lack its newline (`printf '…' | socat …`).
                line = connection.input[connection.inputStart...]
                connection.inputStart = connection.input.count
            } else {
                if connection.input.count - connection.inputStart > configuration.maximumRequestBytes {
                    rejectOverlong(connection)
                }
                break
            }
            guard line.count <= configuration.maximumRequestBytes else {
                rejectOverlong(connection)
                break
            }
            handle(line: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, on: connection)
        }
        connection.compactInput()
    }

    private func rejectOverlong(_ connection: Connection) {
        let limit = configuration.maximumRequestBytes
        let error = ControlError.badRequest(
            "request longer than \(limit) bytes without a newline; closing the connection")
        connection.output.enqueue(ReplyLine.failure(id: .null, error: error))
        connection.closeWhenFlushed = true
        connection.input = []
        connection.inputStart = 0
    }

    private func handle(line: ArraySlice<UInt8>, on connection: Connection) {
        // Blank lines (a stray Enter in socat) are not requests.
        guard line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) else { return }
        switch ControlRequest.parse(line: line, peer: connection.peer) {
        case .success(let request):
            connection.requestRunning = true
            if case .terminated = requests.yield(PendingRequest(request: request, output: connection.output)) {
                connection.output.enqueue(
                    ReplyLine.failure(id: request.id, error: .internalError("the daemon is shutting down")))
                connection.requestRunning = false
                connection.closeWhenFlushed = true
            }
        case .failure(let rejection):
            connection.output.enqueue(ReplyLine.failure(id: rejection.id, error: rejection.error))
        }
    }

    private func flush(_ connection: Connection) {
        switch connection.output.flush(to: connection.fd) {
        case .idle:
            connection.stalledSince = nil
        case .wrote(let bytes, let allSent):
            if allSent {
                connection.stalledSince = nil
            } else if bytes > 0 || connection.stalledSince == nil {
                connection.stalledSince = ContinuousClock.now
            } else if let since = connection.stalledSince, ContinuousClock.now - since >= configuration.writeTimeout {
                close(connection, reason: "client read nothing for \(configuration.writeTimeout)")
            }
        case .failed(let code):
            close(connection, reason: "write failed: \(Syscalls.errorText(code))")
        }
    }

    private func pollTimeoutMilliseconds() -> Int32 {
        var deadlines = connections.compactMap { $0.stalledSince.map { $0 + configuration.writeTimeout } }
        if let pause = acceptPausedUntil { deadlines.append(pause) }
        guard let nearest = deadlines.min() else { return -1 }
        let remaining = nearest - ContinuousClock.now
        let milliseconds = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
        // +1: wake just after the deadline, not just before it and then spin.
        return Int32(clamping: max(0, milliseconds + 1))
    }

    private func close(_ connection: Connection, reason: String) {
        connection.output.close(reason: reason)
        Glibc.close(connection.fd)
        connection.isClosed = true
    }

    private func shutDown() {
        for connection in connections where !connection.isClosed {
            close(connection, reason: "the control server stopped")
        }
        connections = []
        listener.closeAndRemove()
        requests.finish()
    }
}

/// One client, as the server thread sees it.
final class Connection {
    let fd: Int32
    let peer: ControlPeer
    let output: ConnectionOutput
    var input: [UInt8] = []
    /// Bytes before this index are consumed lines.
    var inputStart = 0
    var inputEnded = false
    /// A request of this connection is with the handler; the next waits (replies stay in order).
    var requestRunning = false
    var closeWhenFlushed = false
    var stalledSince: ContinuousClock.Instant?
    var isClosed = false

    init(fd: Int32, peer: ControlPeer, output: ConnectionOutput) {
        self.fd = fd
        self.peer = peer
        self.output = output
    }

    /// Read only between requests: while one runs, further lines wait in the kernel's buffer,
    /// so a client cannot make the daemon hold more than one line ahead.
    var wantsInput: Bool { !requestRunning && !inputEnded && !closeWhenFlushed && !isClosed }

    func compactInput() {
        if inputStart == input.count {
            input.removeAll(keepingCapacity: input.capacity <= 65_536)
            inputStart = 0
        } else if inputStart > 0 && inputStart >= input.count / 2 {
            input.removeFirst(inputStart)
            inputStart = 0
        }
    }
}
