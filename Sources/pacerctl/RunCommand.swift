import ArgumentParser
import Control
import PacerConfig

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
        discussion: "Examples: pacerctl run start; pacerctl run lap; pacerctl run stop"
    )

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case start, stop, pause, resume, lap
    }

    @Argument(help: "start, stop, pause, resume or lap.") var action: Action
    @OptionGroup var options: DaemonOptions

    func run() throws {
        let status = options.connect().call("run.\(action.rawValue)")
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
}
