import ArgumentParser
import Control
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `pacerctl sos`: alone it only shows the state; raising takes the explicit `raise`.
struct SOSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sos",
        abstract: "The SOS watcher: its state, a manual alert, a cancel, a test through every channel.",
        discussion: """
            `pacerctl sos` alone shows the state and raises nothing. `sos raise` sends an alert now \
            (SMS to [sos] contacts, HTTPS to [upload] url, the [sos] hook). `sos cancel` sends \
            "false alarm, I am OK" for every open alert. `sos test` sends a message marked as a \
            test through every channel and waits for each to acknowledge it.
            """,
        subcommands: [SOSStatusCommand.self, SOSRaiseCommand.self, SOSCancelCommand.self, SOSTestCommand.self],
        defaultSubcommand: SOSStatusCommand.self
    )
}

struct SOSStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "What is watched, and the newest alerts with every delivery.")
    @OptionGroup var options: DaemonOptions

    func run() throws {
        let status = options.connect().call("sos.status")
        if options.json {
            print(status?.serialized() ?? "null")
            return
        }
        print(SOSText.status(status))
    }
}

struct SOSRaiseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "raise", abstract: "Raise an SOS now, on every channel.")
    @OptionGroup var options: DaemonOptions

    func run() throws {
        let reply = options.connect().call("sos.raise")
        if options.json { print(reply?.serialized() ?? "null"); return }
        print("SOS raised: alert \(reply?["alert_id"]?.stringValue ?? "?"); `pacerctl sos` shows its deliveries, `pacerctl sos cancel` calls it off")
    }
}

struct SOSCancelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cancel", abstract: "Call off every open alert (\"false alarm, I am OK\" goes out), or answer \"Are you OK?\".")
    @OptionGroup var options: DaemonOptions

    func run() throws {
        let reply = options.connect().call("sos.cancel")
        if options.json { print(reply?.serialized() ?? "null"); return }
        let count = Int(reply?["cancelled"]?.doubleValue ?? 0)
        if count == 0 {
            print("answered \"Are you OK?\": no help is called")
        } else {
            print("cancelled \(count) alert\(count == 1 ? "" : "s"): \"false alarm, I am OK\" is being sent")
        }
    }
}

struct SOSTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test", abstract: "Send a message marked as a test through every channel and wait for each to acknowledge it.")
    @OptionGroup var options: DaemonOptions
    @Option(help: ArgumentHelp("Seconds to wait for every channel.", valueName: "S")) var wait: Int = 60

    func validate() throws {
        guard (1...600).contains(wait) else { throw ValidationError("--wait must be 1 to 600 seconds") }
    }

    func run() throws {
        let connection = options.connect()
        let reply = connection.call("sos.test")
        guard let id = reply?["alert_id"]?.stringValue else { throw ExitCode(70) }
        if !options.json { print("test alert \(id) sent; waiting for every channel to acknowledge it (up to \(wait) s)") }
        let deadline = ContinuousClock.now + .seconds(wait)
        var deliveries: [JSONValue] = []
        while true {
            let status = connection.call("sos.status")
            let alert = status?["alerts"]?.arrayValue?.first { $0["alert_id"]?.stringValue == id }
            deliveries = alert?["deliveries"]?.arrayValue ?? []
            let done = !deliveries.isEmpty && deliveries.allSatisfy { $0["acknowledged"]?.stringValue != nil }
            if done || ContinuousClock.now >= deadline { break }
            usleep(200_000)
        }
        if options.json {
            print(JSONValue.object(["alert_id": .string(id), "deliveries": .array(deliveries)]).serialized())
        } else {
            for d in deliveries { print("  " + SOSText.delivery(d)) }
        }
        let ok = !deliveries.isEmpty && deliveries.allSatisfy { $0["acknowledged"]?.stringValue != nil }
        if !ok {
            if !options.json { printError("pacerctl: not every channel acknowledged the test within \(wait) s; pacerd keeps retrying") }
            throw ExitCode(75)  // EX_TEMPFAIL
        }
        if !options.json { print("every channel acknowledged the test") }
    }
}

enum SOSText {
    static func status(_ status: JSONValue?) -> String {
        guard let status else { return "(no reply)" }
        var lines: [String] = []
        let monitoring = status["monitoring"]?.boolValue == true
        lines.append("monitoring: " + (monitoring ? "on" : "off ([sos] enabled = false; a manual SOS still goes out)"))
        if let bpm = status["heart_rate"]?.doubleValue {
            lines.append("heart rate: \(Int(bpm)) bpm, \(status["heart_rate_age_s"]?.doubleValue.map { "\($0) s ago" } ?? "")")
        } else {
            lines.append("heart rate: none received")
        }
        if let signal = status["signal"]?.stringValue, let motion = status["motion"]?.stringValue {
            lines.append("heart signal: \(signal.replacing("_", with: " ")); body: \(motion.replacing("_", with: " "))"
                         + (status["asking"]?.boolValue == true ? "; asking \"Are you OK?\"" : ""))
        }
        let faults = status["faults"]?.arrayValue?.compactMap(\.stringValue) ?? []
        if !faults.isEmpty { lines.append("sensor faults: " + faults.joined(separator: ", ")) }
        let channels = status["channels"]?.arrayValue?.compactMap(\.stringValue) ?? []
        lines.append("channels: " + (channels.isEmpty ? "none configured ([sos] contacts, [upload] url, [sos] hook)" : channels.joined(separator: ", ")))
        let open = status["open_alerts"]?.arrayValue?.compactMap(\.stringValue) ?? []
        lines.append("open alerts: " + (open.isEmpty ? "none" : open.joined(separator: ", ")))
        if let problem = status["store_problem"]?.stringValue { lines.append("store: \(problem)") }
        if let problem = status["server_problem"]?.stringValue { lines.append("\(problem) (still retried)") }
        if let call = status["call"], let state = call["state"]?.stringValue {
            lines.append("call: \(state) (alert \(call["alert_id"]?.stringValue ?? "?"))")
        }
        // Monitors' answers, newest first: who, what, when, and what the device did with it.
        let answers = status["answers"]?.arrayValue ?? []
        if !answers.isEmpty { lines.append("answers from monitors:") }
        for answer in answers { lines.append("  " + self.answer(answer)) }
        for alert in status["alerts"]?.arrayValue ?? [] {
            let test = alert["test"]?.boolValue == true ? " (TEST)" : ""
            lines.append("\(alert["raised"]?.stringValue ?? "?") \(alert["kind"]?.stringValue ?? "?")\(test) \(alert["state"]?.stringValue ?? "?") \(alert["alert_id"]?.stringValue ?? "?")")
            for d in alert["deliveries"]?.arrayValue ?? [] { lines.append("  " + delivery(d)) }
        }
        return lines.joined(separator: "\n")
    }

    static func answer(_ a: JSONValue) -> String {
        let from = a["from"]?.stringValue ?? "?"
        let what = switch a["kind"]?.stringValue {
        case "on_my_way": "on my way"
        case "text": "text \u{201C}\(a["text"]?.stringValue ?? "")\u{201D}"
        case "where_are_you": "where are you?"
        default: a["kind"]?.stringValue ?? "?"
        }
        let alert = a["alert_id"]?.stringValue.flatMap { $0.isEmpty ? nil : " (alert \($0))" } ?? ""
        return "\(a["time"]?.stringValue ?? "?") \(from): \(what)\(alert) - \(a["outcome"]?.stringValue ?? "")"
    }

    static func delivery(_ d: JSONValue) -> String {
        let what = "\(d["type"]?.stringValue ?? "?") #\(Int(d["sequence"]?.doubleValue ?? 0)) \(d["channel"]?.stringValue ?? "?") \(d["target"]?.stringValue ?? "?")"
        if let acknowledged = d["acknowledged"]?.stringValue {
            guard d["channel"]?.stringValue == "sms" else { return "\(what): acknowledged \(acknowledged)" }
            // A text: sent, then what its status report said, if one came.
            let status = d["status"]?.stringValue ?? "sent"
            let reported = d["delivery_report"]?["time"]?.stringValue
            if status == "sent" { return "\(what): sent \(acknowledged)" }
            let when = reported ?? "?"
            return "\(what): sent \(acknowledged), " + (status == "delivered" ? "delivered \(when)" : "\(status) (reported \(when))")
        }
        if let replaced = d["replaced"]?.stringValue { return "\(what): not sent, replaced by a newer follow-up \(replaced)" }
        let attempts = Int(d["attempts"]?.doubleValue ?? 0)
        return "\(what): pending after \(attempts) attempt\(attempts == 1 ? "" : "s")" + (d["last_error"]?.stringValue.map { " (\($0))" } ?? "")
    }
}
