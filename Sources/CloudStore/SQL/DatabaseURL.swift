import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// `--database`: `sqlite:/path/cloud.db` (or a plain path) or
/// `postgres://user[:password]@host[:port]/database[?sslmode=MODE[&sslrootcert=CA.pem]]`
/// (`postgresql://` too). `sslmode` as libpq's: `disable` (the default), `prefer` (TLS when the
/// server offers it, certificate not checked), `require` (TLS or nothing, certificate not
/// checked), `verify-ca` (the certificate must chain to `sslrootcert`, or the system's CAs),
/// `verify-full` (that, and it must name the host). `pool_max_conns=N` (pgx's name; 1 to 1000,
/// default 20) bounds the connections an instance holds: the server's `max_connections` is
/// shared by every instance.
public enum DatabaseURL: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(host: String, port: Int, user: String, password: String?, database: String, tls: PostgresTLS = .disable,
                  poolSize: Int = DatabaseURL.defaultPoolSize)

    /// PostgresNIO's own default.
    public static let defaultPoolSize = 20

    /// How the PostgreSQL connection is encrypted.
    public enum PostgresTLS: Sendable, Equatable {
        case disable
        case prefer
        case require
        case verifyCA(rootCertificate: String?)
        case verifyFull(rootCertificate: String?)

        var sslmode: String {
            switch self {
            case .disable: "sslmode=disable"
            case .prefer: "sslmode=prefer"
            case .require: "sslmode=require"
            case .verifyCA(let root): "sslmode=verify-ca" + (root.map { ", sslrootcert=\($0)" } ?? "")
            case .verifyFull(let root): "sslmode=verify-full" + (root.map { ", sslrootcert=\($0)" } ?? "")
            }
        }
    }

    public init(_ text: String) throws {
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
            guard !path.isEmpty else { throw StoreError("--database sqlite: needs a path, e.g. sqlite:/var/lib/pacer-cloud/cloud.db") }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            // Never echo the URL: it may hold the password.
            guard let url = URLComponents(string: text), let host = url.host, !host.isEmpty else {
                throw StoreError("--database is not postgres://user@host:port/database")
            }
            let database = String(url.path.drop(while: { $0 == "/" }))
            guard !database.isEmpty else { throw StoreError("--database names no database (postgres://user@host:port/DATABASE)") }
            guard let user = url.user, !user.isEmpty else { throw StoreError("--database names no user (postgres://USER@host/db)") }
            let items = url.queryItems ?? []
            self = .postgres(host: host, port: url.port ?? 5432, user: user, password: url.password, database: database,
                             tls: try Self.tls(items.filter { $0.name != "pool_max_conns" }), poolSize: try Self.poolSize(items))
        } else if text.contains("://") {
            throw StoreError("--database: only sqlite:PATH and postgres://… are supported")
        } else {
            self = .sqlite(path: text)
        }
    }

    private static func poolSize(_ items: [URLQueryItem]) throws -> Int {
        guard let item = items.last(where: { $0.name == "pool_max_conns" }) else { return defaultPoolSize }
        guard let size = item.value.flatMap({ Int($0) }), (1...1000).contains(size) else {
            throw StoreError("--database: pool_max_conns must be a whole number from 1 to 1000, not '\(item.value ?? "")'")
        }
        return size
    }

    private static func tls(_ items: [URLQueryItem]) throws -> PostgresTLS {
        var mode = "disable"
        var root: String?
        for item in items {
            switch item.name {
            case "sslmode": mode = item.value ?? ""
            case "sslrootcert": root = item.value
            default: throw StoreError("--database: unknown parameter '\(item.name)' (known: sslmode, sslrootcert, pool_max_conns)")
            }
        }
        switch mode {
        case "disable": return .disable
        case "prefer": return .prefer
        case "require": return .require
        case "verify-ca": return .verifyCA(rootCertificate: root)
        case "verify-full": return .verifyFull(rootCertificate: root)
        default: throw StoreError("--database: sslmode '\(mode)' is not one of disable, prefer, require, verify-ca, verify-full")
        }
    }

    /// Opens the database (not yet migrated). PostgreSQL's must also be run (it is a Service).
    public func openDatabase() async throws -> StoreDatabase {
        switch self {
        case .sqlite(let path):
            return try await StoreDatabase.sqlite(path: path)
        case .postgres(let host, let port, let user, let password, let database, let tls, let poolSize):
            let clientTLS: PostgresClient.Configuration.TLS
            let probeTLS: PostgresConnection.Configuration.TLS
            if let configuration = try Self.configuration(tls) {
                // One plain connection first: the pool would only retry a refused certificate
                // until its circuit breaker trips, and say nothing about why.
                let context = try NIOSSLContext(configuration: configuration)
                (clientTLS, probeTLS) = tls == .prefer ? (.prefer(configuration), .prefer(context)) : (.require(configuration), .require(context))
            } else {
                (clientTLS, probeTLS) = (.disable, .disable)
            }
            let logger = Logger(label: "pacer-cloud.postgres")
            var configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: password, database: database,
                                                             tls: clientTLS)
            configuration.options.maximumConnections = poolSize
            let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
            return StoreDatabase.postgres(client, probe: .init(host: host, port: port, username: user, password: password, database: database,
                                                               tls: probeTLS),
                                          describedAs: "\(user)@\(host):\(port)/\(database) (\(tls.sslmode))", logger: logger)
        }
    }

    /// The TLS settings `mode` asks for; nil: no TLS.
    private static func configuration(_ mode: PostgresTLS) throws -> TLSConfiguration? {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case .disable:
            return nil
        case .prefer, .require:
            // libpq's meaning: encrypted, but anyone's certificate is taken.
            tls.certificateVerification = .none
        case .verifyCA(let root), .verifyFull(let root):
            if let root {
                guard FileManager.default.isReadableFile(atPath: root) else {
                    throw StoreError("--database: sslrootcert \(root) cannot be read")
                }
                tls.trustRoots = .file(root)
            }
            if case .verifyCA = mode { tls.certificateVerification = .noHostnameVerification }
        }
        return tls
    }
}
