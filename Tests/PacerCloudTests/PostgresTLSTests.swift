import CloudStore
import Foundation
import PacerCloud
import PacerTestSupport
import PostgresNIO
import Testing

/// TLS to PostgreSQL as the database URL asks, against a private server with ssl=on and a
/// throwaway CA; the server's own pg_stat_ssl says whether the connection is encrypted.
@Suite("pacer-cloud: PostgreSQL over TLS", .timeLimit(.minutes(10)))
struct PostgresTLSTests {
    /// Migrates through `url` and asks the server whether this connection uses TLS.
    static func connectionUsesTLS(_ url: String) async throws -> Bool {
        let store = try await CloudStore.open(DatabaseURL(url))
        return try await store.withRunning {
            try await store.migrate()
            let rows = try await #require(store.database.postgresClient).query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            var encrypted = false
            for try await value in rows.decode(Bool.self) { encrypted = value }
            return encrypted
        }
    }

    @Test("sslmode=require and verify-full (with the right CA) are encrypted; disable is not")
    func encrypted() async throws {
        let server = try await offPool { try PostgresServer(tls: true) }
        defer { server.stop() }
        let ca = try #require(server.certificates?.caFile)
        #expect(try await Self.connectionUsesTLS(server.url() + "?sslmode=require"))
        #expect(try await Self.connectionUsesTLS(server.url() + "?sslmode=verify-full&sslrootcert=" + ca))
        #expect(try await Self.connectionUsesTLS(server.url() + "?sslmode=verify-ca&sslrootcert=" + ca))
        #expect(try await Self.connectionUsesTLS(server.url() + "?sslmode=prefer"))
        #expect(try await Self.connectionUsesTLS(server.url() + "?sslmode=disable") == false)
        #expect(try await Self.connectionUsesTLS(server.url()) == false)
    }

    @Test("verify-full with the wrong CA fails with a message naming the certificate; require without TLS on the server fails")
    func refused() async throws {
        let server = try await offPool { try PostgresServer(tls: true) }
        let plain = try await offPool { try PostgresServer() }
        let directory = try TemporaryDirectory(prefix: "pacer-pg-tls")
        defer {
            server.stop()
            plain.stop()
        }
        let wrong = try await offPool { try HTTPSSink.Certificates.make(in: directory, name: "wrong") }
        let error = await #expect(throws: StoreError.self) {
            _ = try await Self.connectionUsesTLS(server.url() + "?sslmode=verify-full&sslrootcert=" + wrong.caFile)
        }
        let text = error?.message ?? ""
        #expect(text.contains("cannot connect to PostgreSQL postgres@127.0.0.1:\(server.port)/postgres (sslmode=verify-full, sslrootcert=\(wrong.caFile))"), "\(text)")
        #expect(text.contains("its TLS certificate does not verify"), "\(text)")
        let noTLS = await #expect(throws: StoreError.self) { _ = try await Self.connectionUsesTLS(plain.url() + "?sslmode=require") }
        #expect(noTLS?.message.contains("the server does not offer TLS") == true, "\(String(describing: noTLS))")
        // The same for pacer-cloud's migration (what `serve` does first): no retries for minutes.
        let started = ContinuousClock.now
        let store = try await CloudStore.open(DatabaseURL(server.url() + "?sslmode=verify-full&sslrootcert=" + wrong.caFile))
        await #expect(throws: StoreError.self) { try await store.withRunning { try await store.migrate() } }
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test("the URL's TLS and pool parameters are checked: unknown modes, parameters and pool sizes are refused without echoing the password")
    func parsed() throws {
        #expect(try DatabaseURL("postgres://u:pw@h/db?sslmode=verify-full&sslrootcert=/ca.pem")
            == .postgres(host: "h", port: 5432, user: "u", password: "pw", database: "db", tls: .verifyFull(rootCertificate: "/ca.pem")))
        #expect(try DatabaseURL("postgresql://u@h:6432/db?sslmode=require")
            == .postgres(host: "h", port: 6432, user: "u", password: nil, database: "db", tls: .require))
        #expect(try DatabaseURL("postgres://u@h/db?pool_max_conns=4&sslmode=require")
            == .postgres(host: "h", port: 5432, user: "u", password: nil, database: "db", tls: .require, poolSize: 4))
        for bad in ["postgres://u:s3cret@h/db?sslmode=always", "postgres://u:s3cret@h/db?ssl=true", "postgres://u:s3cret@h/db?pool_max_conns=0",
                    "postgres://u:s3cret@h/db?pool_max_conns=1001", "postgres://u:s3cret@h/db?pool_max_conns=many"] {
            let error = #expect(throws: StoreError.self) { try DatabaseURL(bad) }
            #expect(error.map { !String(describing: $0).contains("s3cret") } == true)
        }
    }
}
