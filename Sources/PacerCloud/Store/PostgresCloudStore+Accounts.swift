import PostgresNIO

extension PostgresCloudStore {
    /// Accounts stored before addresses were NFKC-normalised and invisible characters refused:
    /// their address in today's form (as `SQLiteCloudStore.normalizeAccountEmails`), under the
    /// migration's lock so that instances starting at once do not race on the unique address.
    func normalizeAccountEmails() async throws {
        let logger = logger
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7365872)", logger: logger)
            var rows: [(String, String)] = []
            for try await row in try await connection.query("SELECT id, email FROM account", logger: logger).decode((String, String).self) {
                rows.append(row)
            }
            for (id, email) in rows {
                guard let normalized = EmailAddress.migrated(email), normalized != email else { continue }
                try await connection.query(
                    """
                    UPDATE account SET email = \(normalized)
                    WHERE id = \(id) AND NOT EXISTS (SELECT 1 FROM account WHERE email = \(normalized))
                    """, logger: logger)
            }
        }
    }
}
