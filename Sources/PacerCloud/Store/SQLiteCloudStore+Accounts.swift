import GRDB

extension SQLiteCloudStore {
    /// Accounts stored before addresses were NFKC-normalised and invisible characters refused:
    /// their address in today's form (`EmailAddress.migrated`), so that log-in, reset and sign-up,
    /// which look up the normalised form, find them and cannot make a look-alike second account.
    /// A row whose normalised form another account has already keeps its address (the other
    /// account, reachable by it, wins; this one can no longer be logged in to and is left for
    /// the operator: `pacer-cloud user list`). Cheap at every start: one read of two columns.
    func normalizeAccountEmails() async throws {
        try await pool.write { db in
            for row in try Row.fetchAll(db, sql: "SELECT id, email FROM account") {
                let id: String = row["id"], email: String = row["email"]
                guard let normalized = EmailAddress.migrated(email), normalized != email,
                      try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE email = ?", arguments: [normalized]) == nil else { continue }
                try db.execute(sql: "UPDATE account SET email = ? WHERE id = ?", arguments: [normalized, id])
            }
        }
    }
}
