import ArgumentParser
import Control
import PacerConfig

#if canImport(Glibc)
import Glibc
#endif

/// `pacerctl status` and `pacerctl run start|stop|pause|resume|lap`: the daemon's state and the
/// run button, over the control socket.
struct DaemonOptions: ParsableArguments {
    @Option(help: ArgumentHelp("pacerd's control socket (default: $PACER_SOCKET, else [control] socket in the config, else /run/pacer/control.sock).", valueName: "PATH"))
    var socket: String?

    @Option(name: .customLong("config"), help: ArgumentHelp("Config file (default: \(PacerConfiguration.defaultPath) when present).", valueName: "FILE"))
    var configPath: String?

    @Flag(help: "Print the daemon's JSON reply.") var json = false

    func connect() -> DaemonConnection {
        DaemonConnection.connect(socket: socket, configuration: loadConfiguration(configPath), required: true)!
    }
}

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "What pacerd is doing: the run, GPS, the store.")
    @OptionGroup var options: DaemonOptions

    func run() throws {
        let status = options.connect().call("status")
        printStatus(status, json: options.json)
    }
}

struct RunControlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Start, stop, pause or resume the run, or mark a lap.",
        discussion: """
            Examples: pacerctl run start; pacerctl run start --planned; pacerctl run lap; pacerctl run stop. \
            A plain start is a free run; --planned starts today's planned session (pacerctl plan), --workout FILE follows a file \
            (README "What a start starts").
            """
    )

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case start, stop, pause, resume, lap
    }

    @Argument(help: "start, stop, pause, resume or lap.") var action: Action
    @Option(help: ArgumentHelp("With start: follow this workout (TOML, see config/workouts/README.md); its steps and corrections are spoken.", valueName: "FILE"))
    var workout: String?
    @Flag(help: "With start: start today's planned session from the cloud's training plan (pacerctl plan lists it).")
    var planned = false
    @OptionGroup var options: DaemonOptions

    func validate() throws {
        if workout != nil, action != .start { throw ValidationError("--workout goes with `run start`") }
        if planned, action != .start { throw ValidationError("--planned goes with `run start`") }
        if planned, workout != nil { throw ValidationError("--planned and --workout: choose one") }
    }

    func run() throws {
        var arguments: [String: JSONValue] = [:]
        if planned { arguments["planned"] = .bool(true) }
        if let workout {
            // Checked here first, so a typo is reported with its line before anything starts;
            // pacerd reads the file itself (an absolute path, since it has another working directory).
            do {
                _ = try WorkoutFile.load(path: workout)
            } catch {
                printError("pacerctl: \(error)")
                Glibc.exit(65)
            }
            arguments["workout"] = .string(absolutePath(workout))
        }
        let status = options.connect().call("run.\(action.rawValue)", arguments)
        printStatus(status, json: options.json)
    }
}

/// The status reply: its own JSON, or the line `systemctl status` shows and the run's figures.
func printStatus(_ status: JSONValue?, json: Bool) {
    guard let status else { return }
    if json {
        print(status.serialized())
        return
    }
    print(status["line"]?.stringValue ?? status.serialized())
    if let run = status["run"]?.intValue {
        let distance = status["distance_m"]?.doubleValue ?? 0
        let moving = status["moving_time_s"]?.doubleValue ?? 0
        print("run \(run): \(km(distance)), moving \(clock(moving))")
    }
    if let hr = status["hr"] { print(strapLine(hr)) }
    if let uploads = status["uploads"] { print(uploadsLine(uploads)) }
    if let problem = status["sos_problem"]?.stringValue { print("SOS: \(problem)") }
    if let call = status["sos_call"]?.stringValue { print("SOS call: \(call)") }
}

/// "uploads: 2 runs waiting (14 items, 180 KB), live position waiting" or "uploads: nothing waiting",
/// then what the server refused for good: "; 1 item refused by the server: run 12 chunk 3: HTTP 413: …".
func uploadsLine(_ uploads: JSONValue) -> String {
    if uploads["enabled"]?.boolValue == false { return "uploads: off (no [upload] url)" }
    let runs = uploads["runs"]?.intValue ?? 0
    let items = uploads["items"]?.intValue ?? 0
    let kb = (uploads["bytes"]?.intValue ?? 0 + 1023) / 1024
    var parts: [String] = []
    if runs > 0 { parts.append("\(runs) run\(runs == 1 ? "" : "s") waiting (\(items) item\(items == 1 ? "" : "s"), \(kb) KB)") }
    if uploads["live_position"]?.boolValue == true { parts.append("live position waiting") }
    if let race = uploads["race_positions"]?.intValue, race > 0 { parts.append("\(race) race position\(race == 1 ? "" : "s") waiting") }
    if let failures = uploads["failures_in_a_row"]?.intValue, failures > 0 {
        let retry = uploads["retry_in_s"]?.doubleValue.map { ", next try in \(Int($0.rounded())) s" } ?? ""
        parts.append("\(failures) failed attempt\(failures == 1 ? "" : "s") in a row (\(uploads["last_error"]?.stringValue ?? "?"))\(retry)")
    }
    var line = "uploads: " + (parts.isEmpty ? "nothing waiting" : parts.joined(separator: ", "))
    if let refused = uploads["refused"]?.intValue, refused > 0 {
        let shown = uploads["refused_items"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let more = refused > shown.count ? "; and \(refused - shown.count) more" : ""
        line += "; \(refused) item\(refused == 1 ? "" : "s") refused by the server: " + shown.joined(separator: "; ") + more
    }
    return line
}

/// `pacerctl sync`: the uplink tries at once (instead of waiting out its backoff), and what the
/// cloud has for the device is fetched now.
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Upload what is waiting now, fetch what the cloud has for this device, and say what changed.")
    @OptionGroup var options: DaemonOptions

    func run() throws {
        let reply = options.connect().call("sync")
        if options.json {
            print(reply?.serialized() ?? "null")
        } else {
            if let uploads = reply?["uploads"] { print(uploadsLine(uploads) + "; uploading now") }
            if let sync = reply?["cloud_sync"] { print(cloudSyncLine(sync)) }
        }
    }
}

/// "cloud: notices, profile changed (1 new notice)", "cloud: nothing changed", or why it was not reached.
func cloudSyncLine(_ sync: JSONValue) -> String {
    let unsaid = sync["unsaid_notices"]?.intValue ?? 0
    let waiting = unsaid > 0 ? "; \(unsaid) notice\(unsaid == 1 ? "" : "s") to say" : ""
    guard sync["reached"]?.boolValue == true else {
        let using = sync["fetched_at"]?.stringValue.map { "using the sync of \($0)" } ?? "nothing synced yet"
        return "cloud: not reached (\(sync["error"]?.stringValue ?? "?")); \(using)\(waiting)"
    }
    let changed = sync["changed"]?.arrayValue?.compactMap(\.stringValue) ?? []
    let new = sync["new_notices"]?.intValue ?? 0
    guard !changed.isEmpty else { return "cloud: nothing changed\(waiting)" }
    return "cloud: \(changed.joined(separator: ", ")) changed" + (new > 0 ? " (\(new) new notice\(new == 1 ? "" : "s"))" : "") + waiting
}

/// "strap Polar H10 (C8:4F:0E:12:34:56): connected, battery 80 %, 142 bpm 0.4 s ago".
func strapLine(_ hr: JSONValue) -> String {
    guard let state = hr["state"]?.stringValue, state != "not_paired" else {
        return "strap: not paired (pacerctl strap scan, then pacerctl strap pair ADDRESS)"
    }
    let address = hr["address"]?.stringValue ?? "?"
    let who = hr["name"]?.stringValue.map { "\($0) (\(address))" } ?? address
    var parts: [String] = []
    switch state {
    case "connected": parts.append("connected")
    case "searching": parts.append("not found")
    case "lost": parts.append("lost, reconnecting")
    case "bluetooth_unavailable": parts.append("Bluetooth unavailable")
    default: parts.append(state)
    }
    if let problem = hr["problem"]?.stringValue { parts[0] += " (\(problem))" }
    if let battery = hr["battery_percent"]?.intValue { parts.append("battery \(battery) %") }
    switch hr["reading"]?.stringValue {
    case "no_contact": parts.append("no skin contact")
    case "no_data": if state == "connected" { parts.append("no data yet") }
    default: break
    }
    if let bpm = hr["last_bpm"]?.intValue, let age = hr["last_bpm_age_s"]?.doubleValue {
        let fresh = hr["reading"]?.stringValue == "live"
        parts.append("\(fresh ? "" : "last ")\(bpm) bpm \(age < 10 ? String(format1(age)) : String(Int(age))) s ago")
    }
    return "strap \(who): " + parts.joined(separator: ", ")
}

private func format1(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}

/// `path` made absolute against the current directory (pacerd runs elsewhere).
func absolutePath(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    guard getcwd(&buffer, buffer.count) != nil else { return path }
    let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return cwd.hasSuffix("/") ? cwd + path : cwd + "/" + path
}
