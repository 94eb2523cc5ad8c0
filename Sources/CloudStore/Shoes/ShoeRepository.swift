import CloudModel
import SQLKit

/// The runner's shoes and their distances (#33): what each had when added, plus the believed
/// runs' figures of the runs run in it.
public struct ShoeRepository: Sendable {
    let database: StoreDatabase

    struct Row: Decodable {
        let id: String, accountId: String, name: String, startM: Double, remindM: Double?, retired: Bool, createdMs: Int64, runM: Double?
        var shoe: Shoe {
            Shoe(id: id, accountID: accountId, name: name, startM: startM, remindM: remindM, retired: retired, createdMs: createdMs,
                 distanceM: startM + (runM ?? 0))
        }
    }

    /// The shoe's runs' distance: believed runs only, as the statistics count them.
    static let runDistance: SQLQueryString = """
        (SELECT SUM(f.distance_m) FROM run r JOIN run_figures f ON f.device_id = r.device_id AND f.run_id = r.run_id
         WHERE r.shoe_id = s.id AND r.doubt IS NULL) AS run_m
        """

    /// The account's shoes, in use first, then by when they were added.
    public func shoes(accountID: String) async throws -> [Shoe] {
        try await database.read { db in
            try await db.raw("""
                SELECT s.id, s.account_id, s.name, s.start_m, s.remind_m, s.retired, s.created_ms, \(Self.runDistance)
                FROM shoe s WHERE s.account_id = \(bind: accountID) ORDER BY s.retired, s.created_ms, s.id
                """).rows(Row.self)
        }.map(\.shoe)
    }

    /// Adds the shoe unless the account has `limit` already; false then.
    public func addShoe(_ shoe: Shoe, limit: Int) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("""
                INSERT INTO shoe (id, account_id, name, start_m, remind_m, retired, created_ms)
                SELECT \(bind: shoe.id), \(bind: shoe.accountID), \(bind: shoe.name), \(bind: shoe.startM), \(bind: shoe.remindM), \(bind: shoe.retired),
                       \(bind: shoe.createdMs)
                WHERE (SELECT COUNT(*) FROM shoe WHERE account_id = \(bind: shoe.accountID)) < \(bind: limit)
                RETURNING id
                """).all().count == 1
        }
    }

    /// Changes the account's shoe; false when it has none with that id.
    public func updateShoe(id: String, accountID: String, name: String, startM: Double, remindM: Double?, retired: Bool) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE shoe SET name = \(bind: name), start_m = \(bind: startM), remind_m = \(bind: remindM), retired = \(bind: retired)
                WHERE id = \(bind: id) AND account_id = \(bind: accountID) RETURNING id
                """).all().count == 1
        }
    }

    /// Deletes the account's shoe; its runs keep their distance and lose the shoe.
    public func deleteShoe(id: String, accountID: String) async throws -> Bool {
        try await database.transaction { db in
            let deleted = try await db.raw("DELETE FROM shoe WHERE id = \(bind: id) AND account_id = \(bind: accountID) RETURNING id").all().count == 1
            if deleted { try await db.raw("UPDATE run SET shoe_id = NULL WHERE shoe_id = \(bind: id)").run() }
            return deleted
        }
    }

    /// The run's shoe, or none (nil); false when the run or (for a shoe) the account's shoe is not there.
    public func setRunShoe(device: String, runID: String, shoeID: String?, accountID: String) async throws -> Bool {
        try await database.transaction { db in
            if let shoeID {
                guard try await db.raw("SELECT id FROM shoe WHERE id = \(bind: shoeID) AND account_id = \(bind: accountID)").first() != nil else { return false }
            }
            return try await db.raw("UPDATE run SET shoe_id = \(bind: shoeID) WHERE device_id = \(bind: device) AND run_id = \(bind: runID) RETURNING run_id")
                .all().count == 1
        }
    }

    /// The run's shoe id, if it has one.
    public func runShoe(device: String, runID: String) async throws -> String? {
        try await database.read { db in
            try await db.raw("SELECT shoe_id FROM run WHERE device_id = \(bind: device) AND run_id = \(bind: runID)").first()?
                .decode(column: "shoe_id", as: String?.self)
        }
    }
}
