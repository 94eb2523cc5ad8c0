import CloudModel
import NIOCore

/// The client's address, as rate limits key on it. Behind a reverse proxy every request comes
/// from the proxy, so the proxy's X-Forwarded-For names the client; but anyone can send that
/// header, so it is believed only when the socket peer is a configured trusted proxy. The list is
/// read from the right (each proxy appends the address it received from): the first address
/// that is not itself a trusted proxy is the client. Pure: addresses in, address out.
public enum ClientAddress {
    /// `peer`: the socket's remote address (nil when there is none, as in router tests).
    /// `forwardedFor`: every X-Forwarded-For header value, in order.
    public static func resolve(peer: String?, forwardedFor: [String], trustedProxies: Set<String>) -> String {
        guard let peer = peer.flatMap(normalized) else { return "unknown" }
        guard trustedProxies.contains(peer) else { return peer }
        var client = peer
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { String($0).trimmingSpaces }
        for hop in hops.reversed() {
            // Junk in the list: nothing left of it can be believed, so the last proxy is the client.
            guard let address = normalized(hop) else { return client }
            client = address
            if !trustedProxies.contains(address) { return address }
        }
        return client
    }

    /// The key a per-address limit counts `address` (a `resolve` result) under: an IPv4 address
    /// as it is; an IPv6 address by its /64 ("2001:db8:1:2::/64"), since one subscriber or
    /// host is given a whole /64 and could otherwise take a fresh address for every try.
    public static func rateKey(_ address: String) -> String {
        guard address.contains(":"), let socket = try? SocketAddress(ipAddress: address, port: 0),
              case .v6(let v6) = socket else { return address }
        var raw = v6.address.sin6_addr
        let groups = withUnsafeBytes(of: &raw) { bytes in
            (0..<4).map { String(UInt16(bytes[$0 * 2]) << 8 | UInt16(bytes[$0 * 2 + 1]), radix: 16) }
        }
        return groups.joined(separator: ":") + "::/64"
    }

    /// The address in one canonical spelling ("::ffff:192.0.2.1" as "192.0.2.1", IPv6 compressed),
    /// or nil when `text` is no IP address (a host name, a port, junk).
    public static func normalized(_ text: String) -> String? {
        guard text.utf8.count <= 64, let address = try? SocketAddress(ipAddress: text, port: 0), let ip = address.ipAddress else {
            return nil
        }
        if ip.hasPrefix("::ffff:"), ip.contains(".") { return String(ip.dropFirst(7)) }
        return ip
    }
}
