import FoundationEssentials
import SQLite

/// Alerts and their deliveries on disk. Every alert is committed (fsynced) before anything is
/// sent, and every delivery stays pending until its channel acknowledged it, so a restart picks
/// up exactly what is still owed.
///
/// At least once: an acknowledgement is recorded after the channel gave it. A crash (or power
/// cut) between the two sends that message again on restart: a contact may get the same SMS
/// twice; the server de-duplicates by alert id and sequence. Nothing is ever sent zero times
/// once recorded.
public final class AlertStore: Sendable {
    let queue: DatabaseQueue
    public let path: String
    /// Runs inside an alert's commit, before its rows: tests stall or fail the disk with it.
    let beforeRecord: (@Sendable () throws -> Void)?

    public convenience init(path: String, readOnly: Bool = false) throws(AlertStoreError) {
        try self.init(path: path, readOnly: readOnly, beforeRecord: nil)
    }

    init(path: String, readOnly: Bool = false, beforeRecord: (@Sendable () throws -> Void)?) throws(AlertStoreError) {
        self.path = path
        self.beforeRecord = beforeRecord
        var config = Configuration()
        config.readonly = readOnly
        config.busyMode = .timeout(5)
        config.label = "pacer.sos"
        config.prepareDatabase { db in
            if !readOnly {
                let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                guard mode == "wal" else { throw DatabaseError(message: "could not enable WAL (journal_mode=\(mode ?? "nil"))") }
            }
            // Every commit reaches the disk: an alert recorded is an alert that survives a power cut.
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA cache_size = -256")
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
            if !readOnly { try AlertSchema.migrator.migrate(queue) }
        } catch {
            throw AlertStoreError("opening \(path): \(error)")
        }
    }

    /// What to record of a new alert.
    public struct NewAlert: Sendable {
        public var uuid: String
        public var kind: String
        public var test: Bool
        public var firstOutOfRangeMs: Int64?
        public var raisedMs: Int64
        public var heartRate: Int?
        public var latitude: Double?
        public var longitude: Double?
        public var runUUID: String?

        public init(uuid: String, kind: String, test: Bool, firstOutOfRangeMs: Int64?, raisedMs: Int64, heartRate: Int?,
                    latitude: Double?, longitude: Double?, runUUID: String?) {
            self.uuid = uuid
            self.kind = kind
            self.test = test
            self.firstOutOfRangeMs = firstOutOfRangeMs
            self.raisedMs = raisedMs
            self.heartRate = heartRate
            self.latitude = latitude
            self.longitude = longitude
            self.runUUID = runUUID
        }
    }

    /// A message and where it goes.
    public struct NewMessage: Sendable {
        public var sequence: Int
        public var type: String
        public var createdMs: Int64
        public var sms: String
        public var body: String
        public var targets: [(channel: AlertChannelName, target: String)]

        public init(sequence: Int, type: String, createdMs: Int64, sms: String, body: String, targets: [(channel: AlertChannelName, target: String)]) {
            self.sequence = sequence
            self.type = type
            self.createdMs = createdMs
            self.sms = sms
            self.body = body
            self.targets = targets
        }
    }

    /// The alert and its first message, in one transaction (one fsync). Returns the deliveries.
    public func record(_ alert: NewAlert, message: NewMessage) throws(AlertStoreError) -> [Delivery] {
        try write("recording alert \(alert.uuid)") { db in
            try beforeRecord?()
            try db.execute(sql: """
                INSERT INTO alert (uuid, kind, test, state, first_out_of_range_ms, raised_ms, heart_rate, latitude, longitude, run_uuid)
                VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?, ?)
                """, arguments: [alert.uuid, alert.kind, alert.test, alert.firstOutOfRangeMs, alert.raisedMs, alert.heartRate,
                                 alert.latitude, alert.longitude, alert.runUUID])
            return try Self.insert(message, alertID: db.lastInsertedRowID, alertUUID: alert.uuid, kind: alert.kind, test: alert.test, db: db)
        }
    }

    /// A later message of an open alert (follow-up, all clear, cancel).
    public func add(_ message: NewMessage, toAlert uuid: String, state: String? = nil) throws(AlertStoreError) -> [Delivery] {
        try write("adding a \(message.type) to alert \(uuid)") { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT id, kind, test FROM alert WHERE uuid = ?", arguments: [uuid]) else {
                throw AlertStoreError("no alert \(uuid)")
            }
            if let state { try db.execute(sql: "UPDATE alert SET state = ? WHERE uuid = ?", arguments: [state, uuid]) }
            return try Self.insert(message, alertID: row["id"], alertUUID: uuid, kind: row["kind"], test: row["test"], db: db)
        }
    }

    public func setState(_ state: String, alert uuid: String) throws(AlertStoreError) {
        try write("closing alert \(uuid)") { db in
            try db.execute(sql: "UPDATE alert SET state = ? WHERE uuid = ?", arguments: [state, uuid])
        }
    }

    private static func insert(_ message: NewMessage, alertID: Int64, alertUUID: String, kind: String, test: Bool, db: Database) throws -> [Delivery] {
        try db.execute(sql: "INSERT INTO message (alert_id, sequence, type, created_ms, sms, body) VALUES (?, ?, ?, ?, ?, ?)",
                       arguments: [alertID, message.sequence, message.type, message.createdMs, message.sms, message.body])
        let messageID = db.lastInsertedRowID
        var deliveries: [Delivery] = []
        for (channel, target) in message.targets {
            try db.execute(sql: "INSERT INTO delivery (message_id, channel, target) VALUES (?, ?, ?)",
                           arguments: [messageID, channel.rawValue, target])
            deliveries.append(Delivery(key: .init(messageID: messageID, channel: channel, target: target), alertUUID: alertUUID, kind: kind,
                                       test: test, sequence: message.sequence, type: message.type, sms: message.sms, body: message.body,
                                       attempts: 0, lastError: nil, acknowledgedMs: nil))
        }
        return deliveries
    }

    /// The alert's voice call is about to be placed. Returns false when it had been already: it is
    /// never placed twice.
    public func callPlaced(alert uuid: String, atMs: Int64) throws(AlertStoreError) -> Bool {
        try write("noting the call for alert \(uuid)") { db in
            try db.execute(sql: "UPDATE alert SET call_placed_ms = ?, call_state = 'placing' WHERE uuid = ? AND call_placed_ms IS NULL",
                           arguments: [atMs, uuid])
            return db.changesCount == 1
        }
    }

    /// The call's newest state, for status.
    public func setCallState(_ state: String, alert uuid: String) throws(AlertStoreError) {
        try write("noting the call state of alert \(uuid)") { db in
            try db.execute(sql: "UPDATE alert SET call_state = ? WHERE uuid = ?", arguments: [state, uuid])
        }
    }

    /// The channel acknowledged it: never sent again.
    public func acknowledged(_ key: Delivery.Key, atMs: Int64) throws(AlertStoreError) {
        try write("acknowledging \(key)") { db in
            try db.execute(sql: """
                UPDATE delivery SET attempts = attempts + 1, last_attempt_ms = ?, acknowledged_ms = ?, last_error = NULL
                WHERE message_id = ? AND channel = ? AND target = ?
                """, arguments: [atMs, atMs, key.messageID, key.channel.rawValue, key.target])
        }
    }

    /// An SMS's status report came (`SMSDeliveryState` raw value): shown by status, nothing more.
    public func reported(_ key: Delivery.Key, state: UInt32, atMs: Int64) throws(AlertStoreError) {
        try write("noting the status report of \(key)") { db in
            try db.execute(sql: "UPDATE delivery SET report_state = ?, reported_ms = ? WHERE message_id = ? AND channel = ? AND target = ?",
                           arguments: [state, atMs, key.messageID, key.channel.rawValue, key.target])
        }
    }

    /// A newer follow-up replaced it before it was sent: no longer owed.
    public func replaced(_ key: Delivery.Key, atMs: Int64) throws(AlertStoreError) {
        try write("noting that \(key) was replaced") { db in
            try db.execute(sql: "UPDATE delivery SET replaced_ms = ? WHERE message_id = ? AND channel = ? AND target = ?",
                           arguments: [atMs, key.messageID, key.channel.rawValue, key.target])
        }
    }

    /// An attempt failed; it stays pending.
    public func failed(_ key: Delivery.Key, error: String, atMs: Int64) throws(AlertStoreError) {
        try write("noting a failed attempt of \(key)") { db in
            try db.execute(sql: """
                UPDATE delivery SET attempts = attempts + 1, last_attempt_ms = ?, last_error = ?
                WHERE message_id = ? AND channel = ? AND target = ?
                """, arguments: [atMs, error, key.messageID, key.channel.rawValue, key.target])
        }
    }

    public typealias OpenAlert = (uuid: String, kind: String, lastSequence: Int, callPlacedMs: Int64?)

    /// Alerts (not tests) still open when pacerd last stopped, oldest first, with their newest
    /// message's sequence: the lane adopts them so that a cancel still reaches them.
    public func openAlerts() throws(AlertStoreError) -> [OpenAlert] {
        try read("reading open alerts") { db in
            try Row.fetchAll(db, sql: """
                SELECT a.uuid, a.kind, MAX(m.sequence) AS last, a.call_placed_ms FROM alert a JOIN message m ON m.alert_id = a.id
                WHERE a.state = 'open' AND a.test = 0 GROUP BY a.id ORDER BY a.id
                """).map { (uuid: $0["uuid"], kind: $0["kind"], lastSequence: $0["last"], callPlacedMs: $0["call_placed_ms"]) }
        }
    }

    /// Everything not yet acknowledged nor replaced, oldest message first.
    public func pending() throws(AlertStoreError) -> [Delivery] {
        try read("reading pending deliveries") { db in
            try Self.deliveries(db, where: "d.acknowledged_ms IS NULL AND d.replaced_ms IS NULL")
        }
    }

    /// Every delivery of the newest `limit` alerts, for `pacerctl sos status`.
    public func recent(limit: Int) throws(AlertStoreError) -> [AlertRecord] {
        try read("reading alerts") { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM alert ORDER BY id DESC LIMIT ?", arguments: [limit])
            return try rows.map { row in
                let uuid: String = row["uuid"]
                return AlertRecord(uuid: uuid, kind: row["kind"], test: row["test"], state: row["state"], raisedMs: row["raised_ms"],
                                   firstOutOfRangeMs: row["first_out_of_range_ms"], heartRate: row["heart_rate"],
                                   latitude: row["latitude"], longitude: row["longitude"],
                                   deliveries: try Self.deliveries(db, where: "a.uuid = ?", [uuid]),
                                   callPlacedMs: row["call_placed_ms"], callState: row["call_state"])
            }
        }
    }

    private static func deliveries(_ db: Database, where condition: String, _ arguments: StatementArguments = []) throws -> [Delivery] {
        let rows = try Row.fetchAll(db, sql: """
            SELECT d.message_id, d.channel, d.target, d.attempts, d.last_error, d.acknowledged_ms, d.replaced_ms, d.report_state, d.reported_ms,
                   m.sequence, m.type, m.sms, m.body, a.uuid, a.kind, a.test
            FROM delivery d JOIN message m ON m.id = d.message_id JOIN alert a ON a.id = m.alert_id
            WHERE \(condition) ORDER BY d.message_id, d.channel, d.target
            """, arguments: arguments)
        return rows.compactMap { row in
            guard let channel = AlertChannelName(rawValue: row["channel"]) else { return nil }
            return Delivery(key: .init(messageID: row["message_id"], channel: channel, target: row["target"]), alertUUID: row["uuid"],
                            kind: row["kind"], test: row["test"], sequence: row["sequence"], type: row["type"], sms: row["sms"],
                            body: row["body"], attempts: row["attempts"], lastError: row["last_error"], acknowledgedMs: row["acknowledged_ms"],
                            replacedMs: row["replaced_ms"], reportState: row["report_state"], reportedMs: row["reported_ms"])
        }
    }

    private func write<T>(_ what: String, _ body: (Database) throws -> T) throws(AlertStoreError) -> T {
        do {
            return try queue.write(body)
        } catch let error as AlertStoreError {
            throw error
        } catch {
            throw AlertStoreError("\(what): \(error)")
        }
    }

    private func read<T>(_ what: String, _ body: (Database) throws -> T) throws(AlertStoreError) -> T {
        do {
            return try queue.read(body)
        } catch {
            throw AlertStoreError("\(what): \(error)")
        }
    }
}
