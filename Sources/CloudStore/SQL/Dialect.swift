import SQLKit

/// What SQLite and PostgreSQL spell differently, in one place; everything else in the store's SQL
/// is the same text for both (`ON CONFLICT`, `RETURNING`, partial indexes: SQLite has them all).
public enum Dialect: String, Sendable {
    case sqlite, postgres

    /// Column types in DDL.
    var blob: String { self == .postgres ? "BYTEA" : "BLOB" }
    var real: String { self == .postgres ? "DOUBLE PRECISION" : "REAL" }
    /// An auto-numbered 64-bit key.
    var serialKey: String { self == .postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT" }

    /// Appended to a SELECT inside a transaction to lock the rows read until it ends. SQLite needs
    /// nothing: its one writer holds the whole database from `BEGIN IMMEDIATE`.
    var forUpdate: String { self == .postgres ? " FOR UPDATE" : "" }
    /// As `forUpdate`, skipping rows another transaction holds (work shared between instances).
    var forUpdateSkipLocked: String { self == .postgres ? " FOR UPDATE SKIP LOCKED" : "" }
}

extension Dialect {
    /// The larger of two values: SQLite's scalar MAX, PostgreSQL's GREATEST.
    var greatest: String { self == .postgres ? "GREATEST" : "MAX" }
}

extension Dialect {
    /// Taken first by a transaction that writes a run's chunk or summary, until it ends
    /// (PostgreSQL): a chunk and the summary of one run written at once then see each other's
    /// commit when they count the run's chunks. SQLite's one writer takes them in turn already.
    func lockRunWrites(device: String, runID: String) -> SQLQueryString? {
        guard self == .postgres else { return nil }
        return "SELECT pg_advisory_xact_lock(\(literal: Self.runWritesLockClass), hashtext(\(bind: device + " " + runID)))"
    }

    /// The first key of `lockRunWrites`' two-key locks (a space apart from the migrations' one-key lock).
    static let runWritesLockClass = 7_365_873
}
