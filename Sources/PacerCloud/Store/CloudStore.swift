/// Everything pacer-cloud keeps, behind one protocol so that SQLite (one file, the default) and
/// PostgreSQL (several stateless instances sharing it) behave the same. Every method is one
/// transaction: a request either stores all it should or nothing.
public protocol CloudStore: MonitorStore, HealthStore, Sendable {
    /// Creates or upgrades the schema; safe to call from several instances at once.
    func migrate() async throws

    // Devices.
    /// `webhookSecret` signs the device's webhooks (nil: it has none).
    func addDevice(_ device: Device, tokenHash: String, webhookSecret: String?) async throws
    func devices() async throws -> [Device]
    /// An account's devices, by name (its import device too).
    func devices(accountID: String) async throws -> [Device]
    func device(tokenHash: String) async throws -> Device?
    /// Replaces the device's token hash with one no token has (`Device.revokedTokenMark`): its
    /// next request is 401 on every instance, since none caches tokens. False: no such device.
    func revokeDevice(name: String) async throws -> Bool
    /// Deletes the device with its token, runs (summaries and chunks), position, alerts and alert
    /// messages, in one transaction; the rows deleted, or nil when no device has that name.
    /// Forwards already queued in the outbox still go out.
    func removeDevice(name: String) async throws -> StoreCounts?

    /// Gives the device to the account (or takes it from any with nil). False: no such device.
    func assignDevice(name: String, accountID: String?) async throws -> Bool
    /// Records that the device authenticated at `seenMs` (never moves it back).
    func touchDevice(id: String, seenMs: Int64) async throws
    /// Revokes the token of the account's device with that id (as `revokeDevice`); its runs stay
    /// the account's. False: the account has no such device.
    func unlinkDevice(id: String, accountID: String) async throws -> Bool

    // Device link codes (typed on the device by `pacerctl cloud link`), by their SHA-256.
    /// Stores a code for the account in place of any unused one it had (one live code per
    /// account), and purges codes that expired a day before `nowMs`.
    func addLinkCode(hash: String, accountID: String, expiresMs: Int64, nowMs: Int64) async throws
    /// Takes the code and, in the same transaction, gives its account `device` with the token
    /// of `tokenHash`: a new device, or the account's own device of that name with a new token.
    /// The code is used only when the device is linked.
    func linkDevice(codeHash: String, nowMs: Int64, device: Device, tokenHash: String) async throws -> LinkOutcome

    // Accounts.
    /// Throws `StoreError` when an account has that e-mail address already.
    func addAccount(_ account: Account, passwordHash: String) async throws
    func accounts() async throws -> [Account]
    func account(email: String) async throws -> StoredAccount?
    func account(id: String) async throws -> Account?
    /// Marks the address confirmed; false: no such account.
    func confirmAccount(id: String) async throws -> Bool
    /// Deletes the account and, in the same transaction, every device of it with all their data
    /// (as `removeDevice`); the rows deleted, or nil when there is no such account.
    func deleteAccount(id: String) async throws -> StoreCounts?
    /// Replaces the password hash and ends every session of the account (a reset locks out
    /// whoever knew the old password); every unused e-mailed link (reset, confirm) of it dies too.
    func setPassword(accountID: String, passwordHash: String) async throws

    // Web sessions, by the SHA-256 of their id: shared by every instance on one database.
    func addSession(_ session: StoredSession) async throws
    func session(idHash: String) async throws -> StoredSession?
    func touchSession(idHash: String, seenMs: Int64) async throws
    func deleteSession(idHash: String) async throws
    /// Deletes sessions idle since before `idleBeforeMs` or created before `createdBeforeMs`.
    func deleteExpiredSessions(idleBeforeMs: Int64, createdBeforeMs: Int64) async throws

    // Single-use tokens of e-mailed links (confirmation, password reset), by their SHA-256.
    /// Stores the token and queues `mail` (the link to it) in one transaction.
    func addAccountToken(_ token: AccountToken, mail: OutboxMail) async throws
    /// Queues an e-mail that carries no link (a notice to an account's address).
    func queueMail(_ mail: OutboxMail) async throws
    /// Deletes the token and returns its account when it has that purpose and has not expired
    /// at `nowMs`; a token can be taken once.
    func takeAccountToken(hash: String, purpose: String, nowMs: Int64) async throws -> String?

    // Runs.
    func putChunk(_ chunk: StoredChunk, device: String) async throws -> PutResult
    func putSummary(_ summary: StoredSummary, device: String) async throws -> PutResult
    /// Complete runs only (summary present and chunks 0..<N all there), newest first.
    func completeRuns(device: String, limit: Int, offset: Int) async throws -> [StoredSummary]
    /// The run's summary when the run is complete.
    func completeRun(device: String, runID: String) async throws -> StoredSummary?
    /// Chunks 0..<count in order.
    func chunks(device: String, runID: String, count: Int) async throws -> [StoredChunk]
    /// One chunk (a run is read back one chunk at a time).
    func chunk(device: String, runID: String, seq: Int) async throws -> StoredChunk?
    /// The numbers of the stored chunks below `count`, without their bodies.
    func chunkNumbers(device: String, runID: String, below count: Int) async throws -> [Int]
    /// Samples in the run's chunks below `count`, leaving out chunk `excluding`.
    func storedSamples(device: String, runID: String, below count: Int, excluding: Int?) async throws -> Int
    /// Deletes the summary and every chunk; false when nothing of that run is stored.
    func deleteRun(device: String, runID: String) async throws -> Bool

    // The runner's pages: an account's runs across its devices.
    /// Complete runs of the account's devices starting in [fromMs, toMs), newest first.
    func accountRuns(accountID: String, fromMs: Int64?, toMs: Int64?, limit: Int, offset: Int) async throws -> [AccountRun]
    /// One complete run of the account's devices; nil for another account's run as for none.
    func accountRun(accountID: String, runID: String) async throws -> AccountRun?
    /// A run's stored view (`RunView`) when it was computed from `source`.
    func runView(device: String, runID: String, source: String) async throws -> String?
    func putRunView(device: String, runID: String, source: String, body: String, records: String) async throws
    /// The records part of every stored view of the account's runs, by run id, with its source.
    func runRecords(accountID: String) async throws -> [String: (source: String, records: String)]
    /// Changes the account's time zone and maximum heart rate.
    func setAccountSettings(id: String, timezone: String, maxHeartRate: Int?) async throws

    // Distance goals of an account.
    func goals(accountID: String) async throws -> [Goal]
    /// Adds the goal; false when its id is taken.
    func addGoal(_ goal: Goal) async throws -> Bool
    /// Changes the account's goal with this id; false when the account has none.
    func updateGoal(_ goal: Goal) async throws -> Bool
    /// False when the account has no goal with that id.
    func deleteGoal(accountID: String, id: String) async throws -> Bool

    // The training plan of an account.
    /// The account's sessions that can fall within `from...through` ("YYYY-MM-DD"), by start date.
    func planSessions(accountID: String, from: String, through: String) async throws -> [PlanSession]
    func planSession(accountID: String, id: String) async throws -> PlanSession?
    /// Adds the session; false when its id is taken or the account has `limit` sessions already.
    func addPlanSession(_ session: PlanSession, limit: Int) async throws -> Bool
    /// Changes the account's session with this id (its done marks stay, by date); false when the account has none.
    func updatePlanSession(_ session: PlanSession) async throws -> Bool
    /// Deletes the session with its done marks; false when the account has no session with that id.
    func deletePlanSession(accountID: String, id: String) async throws -> Bool
    /// The account's done marks on dates within `from...through`.
    func planDone(accountID: String, from: String, through: String) async throws -> [PlanDone]
    /// Marks the occurrence done. A run's mark replaces one made by hand; an occurrence done by a
    /// run stays linked to that run. True when something was stored.
    func markPlanDone(_ done: PlanDone) async throws -> Bool
    /// Takes the mark off the account's occurrence; false when it had none.
    func unmarkPlanDone(accountID: String, sessionID: String, date: String) async throws -> Bool

    // Live position.
    /// Stores it unless one with a later `timeMs` is stored; true when stored.
    func putPosition(device: String, timeMs: Int64, json: String) async throws -> Bool
    func position(device: String) async throws -> String?

    // Alerts.
    func recordAlertMessage(_ message: AlertMessageInput) async throws -> AlertRecordResult
    /// The device's alerts (in `state`, when given), newest first, from after `before` (a page's
    /// `AlertCursor`), at most `limit`: every read of alerts is bounded (issue 31).
    func alerts(device: String, state: AlertState?, before: AlertCursor?, limit: Int) async throws -> [StoredAlert]
    /// One alert of the device by its id.
    func alert(device: String, alertID: String) async throws -> StoredAlert?
    /// The alert the page secret names with at most `messages` of its messages (the first, then
    /// the newest; oldest first) and how many it has in all.
    func alert(secret: String, messages: Int) async throws -> AlertMessages?

    // The sync channel.
    func addNotice(_ notice: StoredNotice) async throws
    /// The device's notices not yet delivered, oldest first, at most `limit`.
    func pendingNotices(device: String, limit: Int) async throws -> [StoredNotice]
    /// Every notice of the device, delivered or not, oldest first (operators, tests).
    func notices(device: String) async throws -> [StoredNotice]
    /// Marks the device's notices `ids` delivered at `nowMs` (those delivered already keep their
    /// time), all or none: the ids that are not the device's notices, when any, and nothing marked.
    func acknowledgeNotices(device: String, ids: [String], nowMs: Int64) async throws -> [String]
    // The device's latest state: `HealthStore.putDeviceState`, which keeps its days of heart rate too.
    func deviceState(device: String) async throws -> StoredDeviceState?

    // The forwarding outbox.
    /// Takes up to `limit` due items and leases them until `leaseUntilMs`, so another instance
    /// sharing the database does not send them at the same time.
    func claimOutbox(nowMs: Int64, leaseUntilMs: Int64, limit: Int) async throws -> [OutboxItem]
    func outboxDelivered(id: Int64, nowMs: Int64) async throws
    func outboxFailed(id: Int64, error: String, nextAttemptMs: Int64) async throws
    func outbox() async throws -> [OutboxItem]
    /// Items not yet delivered, and how long the most overdue due one has waited past its time (for /metrics).
    func outboxStatus(nowMs: Int64) async throws -> OutboxStatus

    /// Row counts, for operators and for tests that check a refused request stored nothing.
    func counts() async throws -> StoreCounts
}
