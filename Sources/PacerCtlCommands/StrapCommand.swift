import ArgumentParser
import Control

/// `pacerctl strap scan` and `pacerctl strap pair ADDRESS`: choosing the one heart-rate strap
/// pacerd will use. pacerd does the Bluetooth work; this asks it over the control socket.
struct StrapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strap",
        abstract: "Find and pair the heart-rate strap.",
        discussion: "Only the paired strap is ever used, so a stranger's strap nearby is never picked up.",
        subcommands: [StrapScanCommand.self, StrapPairCommand.self]
    )
}

struct StrapScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scan", abstract: "List the heart-rate straps in range with their signal strength.")
    @Option(help: "How long to listen (1-60 s).") var seconds = 10
    @OptionGroup var options: DaemonOptions

    func validate() throws {
        guard (1...60).contains(seconds) else { throw ValidationError("--seconds must be from 1 to 60") }
    }

    func run() throws {
        guard let reply = options.connect().call("strap.scan", ["seconds": JSONValue(seconds)]) else { return }
        if options.json {
            print(reply.serialized())
            return
        }
        let straps = reply["straps"]?.arrayValue ?? []
        if straps.isEmpty {
            print("No heart-rate strap in range. Wear it (most only advertise on skin) and scan again.")
            return
        }
        print("ADDRESS            SIGNAL    NAME")
        for strap in straps {
            let address = strap["address"]?.stringValue ?? "?"
            let rssi = strap["rssi_dbm"]?.intValue.map { "\($0) dBm" } ?? "-"
            var name = strap["name"]?.stringValue ?? ""
            if strap["paired_with_pacer"]?.boolValue == true { name += " (paired)" }
            print(address.padding(19) + rssi.padding(10) + name)
        }
    }
}

struct StrapPairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Use this strap from now on (\"\" forgets the choice).",
        discussion: "The choice is kept across restarts. [hr] strap in the config, when set, wins and pairing is refused."
    )
    @Argument(help: "The strap's Bluetooth address, as `strap scan` shows it.") var address: String
    @OptionGroup var options: DaemonOptions

    func run() throws {
        guard let reply = options.connect().call("strap.pair", ["address": .string(address)]) else { return }
        if options.json {
            print(reply.serialized())
            return
        }
        let straps = reply["straps"]?.arrayValue?.compactMap(\.stringValue) ?? []
        print(straps.isEmpty ? "No strap paired." : "Paired: \(straps.joined(separator: ", then ")). pacerd connects to it when it is in range.")
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
