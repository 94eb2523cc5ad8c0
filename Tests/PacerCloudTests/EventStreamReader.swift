import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A server-sent event stream read over a plain socket as it arrives (the test clients collect a
/// whole body before returning, so they cannot see when an event came).
final class EventStreamReader: @unchecked Sendable {
    private let socket: Int32
    private var received: [UInt8] = []

    init(port: Int, path: String, cookie: String) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw WebTestError("cannot connect to 127.0.0.1:\(port)")
        }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(cookie)\r\nAccept: text/event-stream\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
    }

    deinit { close(socket) }

    /// Reads until `done` says the text so far is enough, the stream ends, or `deadline` passes;
    /// the text read so far (HTTP head and chunk framing included).
    func read(until deadline: ContinuousClock.Instant, done: (String) -> Bool) -> String {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !done(text), ContinuousClock.now < deadline {
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return text
    }

    var text: String { String(decoding: received, as: UTF8.self) }
}
