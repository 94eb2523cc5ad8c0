import Foundation
import PostgresNIO

/// `--database`: `sqlite:/path/cloud.db` (or a plain path) or
/// `postgres://user[:password]@host[:port]/database` (`postgresql://` too; `?sslmode=disable`
/// is the default, TLS is not offered yet).
public enum DatabaseURL: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(host: String, port: Int, user: String, password: String?, database: String)

    public init(_ text: String) throws {
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
            guard !path.isEmpty else { throw StoreError("--database sqlite: needs a path, e.g. sqlite:/var/lib/pacer-cloud/cloud.db") }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            guard let url = URLComponents(string: text), let host = url.host, !host.isEmpty else {
                throw StoreError("--database '\(text)' is not postgres://user@host:port/database")
            }
            let database = String(url.path.drop(while: { $0 == "/" }))
            guard !database.isEmpty else { throw StoreError("--database '\(text)' names no database (postgres://user@host:port/DATABASE)") }
            guard let user = url.user, !user.isEmpty else { throw StoreError("--database '\(text)' names no user (postgres://USER@host/db)") }
            self = .postgres(host: host, port: url.port ?? 5432, user: user, password: url.password, database: database)
        } else if text.contains("://") {
            throw StoreError("--database '\(text)': only sqlite:PATH and postgres://… are supported")
        } else {
            self = .sqlite(path: text)
        }
    }

    /// Opens the store (not yet migrated). A PostgreSQL store must also be run (it is a Service).
    public func open() throws -> any CloudStore {
        switch self {
        case .sqlite(let path):
            return try SQLiteCloudStore(path: path)
        case .postgres(let host, let port, let user, let password, let database):
            return PostgresCloudStore(configuration: .init(host: host, port: port, username: user, password: password,
                                                           database: database, tls: .disable))
        }
    }
}
