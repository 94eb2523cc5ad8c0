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

/// The race mode of the run being recorded (`race-mode.json` beside the run store): the race and
/// the run's UUID, so that when pacerd restarts and continues that run, race mode goes on.
final class RaceModeFile {
    struct Record: Codable, Equatable {
        var raceID: String
        var runUUID: String?
    }

    private let file: StateFile
    private let log: DaemonLog

    init(storePath: String, log: DaemonLog) {
        file = StateFile(besideStore: storePath, named: "race-mode.json")
        self.log = log
    }

    func read() -> Record? {
        do {
            guard let bytes = try file.read(limit: 4096) else { return nil }
            return try JSONDecoder().decode(Record.self, from: Data(bytes))
        } catch {
            log(.warning, "race", "the race mode kept across restarts (\(file.path)) cannot be read: \(error)")
            return nil
        }
    }

    /// Keeps `record`, or removes the file when nil.
    func write(_ record: Record?) {
        do {
            try file.write(try record.map { Array(try JSONEncoder().encode($0)) }, mode: 0o644)
        } catch {
            log(.warning, "race", "cannot keep race mode across restarts (\(error)); after one it is off")
        }
    }
}
