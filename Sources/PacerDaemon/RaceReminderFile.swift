import FoundationEssentials

/// The races whose reminder was said (`race-reminders.json` beside the run store), so a restart
/// never says one again. Races the sync no longer lists are forgotten.
final class RaceReminderFile {
    private let file: StateFile
    private let log: DaemonLog
    private(set) var said: Set<String> = []

    init(storePath: String, log: DaemonLog) {
        file = StateFile(besideStore: storePath, named: "race-reminders.json")
        self.log = log
        do {
            if let bytes = try file.read(limit: 65_536) { said = Set(try JSONDecoder().decode([String].self, from: Data(bytes))) }
        } catch {
            log(.warning, "race", "which race reminders were said (\(file.path)) cannot be read: \(error); a reminder may be said again")
        }
    }

    /// `ids` were said; only races still listed (`keeping`) are remembered.
    func note(_ ids: [String], keeping listed: [String]) {
        said.formUnion(ids)
        said.formIntersection(listed)
        do {
            try file.write(Array(try JSONEncoder().encode(said.sorted())), mode: 0o644)
        } catch {
            log(.warning, "race", "cannot note the race reminders said (\(error)); after a restart one may be said again")
        }
    }
}
