import CloudModel
import SQLKit
import Threads

/// Everything pacer-cloud keeps: one repository per feature over one database, each written once
/// for SQLite and PostgreSQL. A controller takes the repositories it needs; what spans features
/// (a device's or an account's data deleted whole, the row counts) is here.
public struct CloudStore: Sendable {
    public let database: StoreDatabase
    public let devices: DeviceRepository
    public let accounts: AccountRepository
    public let runs: RunRepository
    public let plans: PlanRepository
    public let alerts: AlertRepository
    public let monitoring: MonitoringRepository
    public let health: HealthRepository
    public let sync: SyncRepository
    public let outbox: OutboxRepository
    public let shoes: ShoeRepository
    public let races: RaceRepository

    public init(database: StoreDatabase) {
        self.database = database
        devices = DeviceRepository(database: database)
        accounts = AccountRepository(database: database)
        runs = RunRepository(database: database)
        plans = PlanRepository(database: database)
        alerts = AlertRepository(database: database)
        monitoring = MonitoringRepository(database: database)
        health = HealthRepository(database: database)
        sync = SyncRepository(database: database)
        outbox = OutboxRepository(database: database)
        shoes = ShoeRepository(database: database)
        races = RaceRepository(database: database)
    }

    /// Opens the database `url` names (not yet migrated; PostgreSQL's must be run: `database` is a Service).
    public static func open(_ url: DatabaseURL) async throws -> CloudStore {
        CloudStore(database: try await url.openDatabase())
    }

    /// Runs the migrations the database has not had yet (`Migrator`); safe from several instances at once.
    public func migrate(nowMs: Int64? = nil) async throws {
        try await Migrator.migrate(database, nowMs: nowMs ?? WallClock.milliseconds())
    }

    /// Runs `body` with the database running (PostgreSQL's pool), then stops it.
    public func withRunning<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await database.withRunning(body)
    }

    /// What a device's runs leave besides `StoreCounts.deviceTables`: the run pages' views and
    /// the health pages' figures and days.
    static let deviceDerivedTables = ["run_view", "run_figures", "run_best_effort", "hr_daily"]

    /// Deletes the device with its token, runs (summaries and chunks), position, alerts and alert
    /// messages, in one transaction; the rows deleted, or nil when no device has that name.
    /// Forwards already queued in the outbox still go out.
    public func removeDevice(name: String) async throws -> StoreCounts? {
        let lock = database.dialect.forUpdate
        return try await database.transaction { db in
            guard let id = try await db.raw("SELECT id FROM device WHERE name = \(bind: name)\(unsafeRaw: lock)").first()?
                .decode(column: "id", as: String.self) else { return nil }
            for table in Self.deviceDerivedTables {
                try await db.raw("DELETE FROM \(ident: table) WHERE device_id = \(bind: id)").run()
            }
            var deleted: [String: Int] = [:]
            for table in StoreCounts.deviceTables {
                deleted[table] = try await db.raw("DELETE FROM \(ident: table) WHERE \(ident: table == "device" ? "id" : "device_id") = \(bind: id) RETURNING 1 AS gone")
                    .all().count
            }
            return StoreCounts.tabulate(StoreCounts.deviceTables) { deleted[$0] ?? 0 }
        }
    }

    /// Deletes the account and, in the same transaction, every device of it with all their data
    /// (as `removeDevice`), its goals and training plan, its consents either way, its invitations
    /// and the answers it sent; the rows deleted, or nil when there is no such account.
    public func deleteAccount(id: String) async throws -> StoreCounts? {
        let lock = database.dialect.forUpdate
        return try await database.transaction { db in
            guard try await db.raw("SELECT id FROM account WHERE id = \(bind: id)\(unsafeRaw: lock)").first() != nil else { return nil }
            let owned: SQLQueryString = "device_id IN (SELECT id FROM device WHERE account_id = \(bind: id))"
            for table in Self.deviceDerivedTables {
                try await db.raw("DELETE FROM \(ident: table) WHERE " + owned).run()
            }
            var deleted: [String: Int] = [:]
            for table in StoreCounts.deviceTables {
                let condition: SQLQueryString = table == "device" ? "account_id = \(bind: id)" : owned
                deleted[table] = try await db.raw("DELETE FROM \(ident: table) WHERE " + condition + " RETURNING 1 AS gone").all().count
            }
            for table in StoreCounts.accountTables {
                deleted[table] = try await db.raw("DELETE FROM \(ident: table) WHERE \(ident: table == "account" ? "id" : "account_id") = \(bind: id) RETURNING 1 AS gone")
                    .all().count
            }
            for statement: SQLQueryString in [
                "DELETE FROM goal WHERE account_id = \(bind: id)",
                "DELETE FROM shoe WHERE account_id = \(bind: id)",
                // Races it owns go whole; in others, its entry, positions and roles.
                "DELETE FROM race_position WHERE account_id = \(bind: id) OR race_id IN (SELECT id FROM race WHERE owner_id = \(bind: id))",
                "DELETE FROM race_entry WHERE account_id = \(bind: id) OR race_id IN (SELECT id FROM race WHERE owner_id = \(bind: id))",
                "DELETE FROM race_observer WHERE account_id = \(bind: id) OR race_id IN (SELECT id FROM race WHERE owner_id = \(bind: id))",
                "DELETE FROM race_organiser WHERE account_id = \(bind: id) OR race_id IN (SELECT id FROM race WHERE owner_id = \(bind: id))",
                "DELETE FROM race WHERE owner_id = \(bind: id)",
                "DELETE FROM plan_done WHERE account_id = \(bind: id)",
                "DELETE FROM plan_session WHERE account_id = \(bind: id)",
                "DELETE FROM monitor_consent WHERE runner_id = \(bind: id) OR monitor_id = \(bind: id)",
                "DELETE FROM monitor_invite WHERE runner_id = \(bind: id)",
                "DELETE FROM alert_answer WHERE monitor_id = \(bind: id)",
            ] {
                try await db.raw(statement).run()
            }
            return StoreCounts.tabulate(StoreCounts.deviceTables + StoreCounts.accountTables) { deleted[$0] ?? 0 }
        }
    }

    /// Row counts, for operators and for tests that check a refused request stored nothing.
    public func counts() async throws -> StoreCounts {
        let counted = try await database.read { db in
            var counted: [String: Int] = [:]
            for table in StoreCounts.allTables {
                counted[table] = try await db.raw("SELECT COUNT(*) AS n FROM \(ident: table)").first()?.decode(column: "n", as: Int.self) ?? 0
            }
            return counted
        }
        return StoreCounts.tabulate { counted[$0] ?? 0 }
    }
}
