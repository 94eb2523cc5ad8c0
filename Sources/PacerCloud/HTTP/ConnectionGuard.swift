import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Open client connections, in total and per socket peer address, held to `ConnectionLimits`.
/// Shared by every event loop, hence the lock; one admit or release is a dictionary update.
final class ConnectionGate: Sendable {
    enum Decision: Equatable {
        case admitted
        case refused(String)
    }

    private struct Counts {
        var total = 0
        var byAddress: [String: Int] = [:]
        var refusedSinceLog = 0
        var lastLog: ContinuousClock.Instant?
    }

    let limits: ConnectionLimits
    /// Trusted proxies: their connections carry many clients, so only the total cap holds them.
    private let exempt: Set<String>
    private let logger: Logger
    /// /metrics' open and refused connections.
    private let metrics: CloudMetrics?
    private let counts = Mutex(Counts())

    init(limits: ConnectionLimits, exempt: Set<String>, logger: Logger, metrics: CloudMetrics? = nil) {
        self.limits = limits
        self.exempt = exempt
        self.logger = logger
        self.metrics = metrics
    }

    var open: Int { counts.withLock { $0.total } }

    /// The key a peer's connections are counted under: its IPv4 address, or its IPv6 /64 (one
    /// subscriber's prefix: any of its 2^64 addresses is the same client).
    static func key(_ address: SocketAddress?) -> String {
        // The rate limits' key: IPv4-mapped addresses as IPv4, IPv6 by its /64.
        address?.ipAddress.flatMap(ClientAddress.normalized).map(ClientAddress.rateKey) ?? "unknown"
    }

    /// Counts the connection when it is under both caps; the caller releases `key` once closed.
    /// `address`: the peer's own address, to recognise a trusted proxy.
    func admit(_ key: String, address: String) -> Decision {
        let (decision, report) = counts.withLock { counts -> (Decision, (refused: Int, total: Int)?) in
            let fromAddress = counts.byAddress[key, default: 0]
            var decision = Decision.admitted
            if counts.total >= limits.maxConnections {
                decision = .refused("the server holds its most open connections (\(limits.maxConnections)); try again shortly")
            } else if !exempt.contains(address), fromAddress >= limits.maxConnectionsPerAddress {
                decision = .refused("too many open connections from your address (at most \(limits.maxConnectionsPerAddress)); close some first")
            }
            guard decision == .admitted else {
                // One log line every 10 s at most: a flood of refusals must not flood the journal.
                counts.refusedSinceLog += 1
                let now = ContinuousClock.now
                guard counts.lastLog.map({ now - $0 >= .seconds(10) }) ?? true else { return (decision, nil) }
                counts.lastLog = now
                defer { counts.refusedSinceLog = 0 }
                return (decision, (counts.refusedSinceLog, counts.total))
            }
            counts.total += 1
            counts.byAddress[key] = fromAddress + 1
            return (decision, nil)
        }
        if decision == .admitted { metrics?.connectionOpened() } else { metrics?.connectionRefused() }
        if let report {
            logger.warning("refusing connections at the cap", metadata: [
                "refused": "\(report.refused)", "open": "\(report.total)", "max_connections": "\(limits.maxConnections)",
                "max_connections_per_address": "\(limits.maxConnectionsPerAddress)",
            ])
        }
        return decision
    }

    func release(_ key: String) {
        counts.withLock { counts in
            counts.total -= 1
            let left = counts.byAddress[key, default: 1] - 1
            counts.byAddress[key] = left > 0 ? left : nil
        }
        metrics?.connectionClosed()
    }
}

/// HTTP/1.1 with the connection caps and the header, idle and body timeouts: Hummingbird's
/// HTTP1Channel, behind an admission check at accept and with `ConnectionDeadlineHandler` in
/// its pipeline. A connection over a cap is answered 503 (Retry-After, a JSON error) and closed
/// before its request is read, so it costs a descriptor for a moment only.
struct LimitedHTTP1Channel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        /// nil: refused at accept; nothing to serve.
        let http: HTTP1Channel.Value?
    }

    let inner: HTTP1Channel
    let gate: ConnectionGate

    init(responder: @escaping HTTPChannelHandler.Responder, gate: ConnectionGate) {
        let limits = gate.limits
        inner = HTTP1Channel(responder: responder, configuration: .init(additionalChannelHandlers: [ConnectionDeadlineHandler(limits: limits)]))
        self.gate = gate
    }

    static func builder(gate: ConnectionGate) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in LimitedHTTP1Channel(responder: responder, gate: gate) }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // The socket's own peer: a forwarded-for header is not read yet, and could be forged.
        let address = channel.remoteAddress?.ipAddress.flatMap(ClientAddress.normalized) ?? "unknown"
        let key = ConnectionGate.key(channel.remoteAddress)
        switch gate.admit(key, address: address) {
        case .refused(let reason):
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(RefusingHandler(reason: reason))
                return Value(channel: channel, http: nil)
            }
        case .admitted:
            let gate = gate
            channel.closeFuture.whenComplete { _ in gate.release(key) }
            return inner.setup(channel: channel, logger: logger).map { Value(channel: channel, http: $0) }
        }
    }

    func handle(value: Value, logger: Logger) async {
        guard let http = value.http else { return }
        await inner.handle(value: http, logger: logger)
    }
}

/// Answers a refused connection once, 503 with Retry-After, and closes it.
private final class RefusingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let reason: String
    private var answered = false

    init(reason: String) { self.reason = reason }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { answer(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        answer(context)
        context.fireChannelActive()
    }

    /// Whatever the client sends is dropped unread.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    private func answer(_ context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        let body = #"{"error":{"code":"too_many_connections","message":""# + reason + #""}}"# + "\n"
        let head = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: head + body))).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Closes a connection whose client is too slow: headers not complete `headerTimeout` after
/// accept (or after a keep-alive request's first byte), no request `idleTimeout` after the last
/// response, a body that pauses `bodyTimeout` or averages under `minimumBodyRate` after that.
/// While a request is being answered nothing is timed here (long-polls and streams bound
/// themselves), and a pause while the server is not reading (back-pressure) is never the
/// client's. Sits after the HTTP decoder: parts say where a request is, and every socket read
/// reaches it as channelReadComplete even when the decoder has no part yet.
final class ConnectionDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let header: TimeAmount, idle: TimeAmount, body: TimeAmount
    /// How often the deadlines are looked at: a fifth of the shortest, 50 ms to 1 s.
    private let tick: TimeAmount
    private var timer: Scheduled<Void>?

    private var accepted = NIODeadline.now()
    /// Requests whose head was read and whose response has not ended.
    private var requestsOpen = 0
    private var lastResponseEnd: NIODeadline?
    /// The first byte of the next request, before its head is complete.
    private var firstByte: NIODeadline?
    private var readingBody = false
    private var bodyStart = NIODeadline.now(), bodyBytes = 0
    private var lastBytes = NIODeadline.now()
    /// Whether the pipeline asked for data since the last read (false: back-pressure) and when.
    private var readOutstanding = false
    private var readWanted = NIODeadline.now()

    init(limits: ConnectionLimits) {
        header = Self.amount(limits.headerTimeout)
        idle = Self.amount(limits.idleTimeout)
        body = Self.amount(limits.bodyTimeout)
        tick = max(.milliseconds(50), min(.seconds(1), TimeAmount.nanoseconds(min(header.nanoseconds, idle.nanoseconds, body.nanoseconds) / 5)))
    }

    static func amount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        accepted = .now()
        schedule(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            requestsOpen += 1
            readingBody = true
            bodyStart = .now()
            bodyBytes = 0
            firstByte = nil
        case .body(let buffer):
            bodyBytes += buffer.readableBytes
        case .end:
            readingBody = false
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        lastBytes = now
        readOutstanding = false
        if !readingBody, requestsOpen == 0, firstByte == nil { firstByte = now }
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if !readOutstanding {
            readOutstanding = true
            readWanted = .now()
        }
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            requestsOpen = max(0, requestsOpen - 1)
            if requestsOpen == 0 { lastResponseEnd = .now() }
        }
        context.write(data, promise: promise)
    }

    private func schedule(_ context: ChannelHandlerContext) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: tick) { [self] in
            timer = nil
            guard context.channel.isActive else { return }
            if overdue(now: .now()) != nil {
                context.close(promise: nil)
            } else {
                schedule(context)
            }
        }
    }

    /// Why the connection should close now, or nil.
    private func overdue(now: NIODeadline) -> Overdue? {
        if readingBody {
            guard readOutstanding else { return nil }
            if now - max(lastBytes, readWanted) > body { return .bodyPaused }
            let elapsed = now - bodyStart
            if elapsed > body, Double(bodyBytes) < Double(ConnectionLimits.minimumBodyRate) * Double(elapsed.nanoseconds) / 1e9 {
                return .bodyTooSlow
            }
            return nil
        }
        if requestsOpen > 0 { return nil }
        if let firstByte { return now - max(firstByte, lastResponseEnd ?? firstByte) > header ? .headersTooSlow : nil }
        if let lastResponseEnd { return now - lastResponseEnd > idle ? .idle : nil }
        return now - accepted > header ? .headersTooSlow : nil
    }

    enum Overdue {
        case headersTooSlow, idle, bodyPaused, bodyTooSlow
    }
}
