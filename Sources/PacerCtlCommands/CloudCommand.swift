import ArgumentParser
import Control

/// `pacerctl cloud [show|link URL CODE|unlink]`: the device's link to an account in the cloud.
/// pacerd does the exchange and keeps the token; pacerctl never sees it.
struct CloudCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloud", abstract: "Link this device to a cloud account with a one-time code, show the link, or unlink.",
        subcommands: [Show.self, Link.self, Unlink.self], defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "The link: URL, device name, account, since when.")
        @OptionGroup var options: DaemonOptions

        func run() throws {
            let reply = options.connect().call("cloud")
            if options.json { print(reply?.serialized() ?? "null") } else { print(CloudCommand.describe(reply)) }
        }
    }

    struct Link: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "link", abstract: "Exchange the code from the cloud's My devices page for this device's own token.",
            discussion: "Example: pacerctl cloud link https://pacer.example.org ABCD-EFGH")
        @Argument(help: "The cloud's URL, as the page shows it.") var url: String
        @Argument(help: "The one-time code (valid 10 minutes, once).") var code: String
        @Option(help: "The name this device gets in the account (default: the cloud picks one; an existing name of the account re-links that device).")
        var name: String?
        @OptionGroup var options: DaemonOptions

        func run() throws {
            var arguments: [String: JSONValue] = ["url": .string(url), "code": .string(code)]
            if let name { arguments["name"] = .string(name) }
            let reply = options.connect().call("cloud.link", arguments)
            if options.json { print(reply?.serialized() ?? "null") } else { print(CloudCommand.describe(reply)) }
        }
    }

    struct Unlink: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "unlink", abstract: "Forget the link (and have the cloud revoke its token).")
        @OptionGroup var options: DaemonOptions

        func run() throws {
            let reply = options.connect().call("cloud.unlink")
            if options.json {
                print(reply?.serialized() ?? "null")
            } else {
                print("unlinked: " + (reply?["cloud_told"]?.stringValue ?? ""))
                print(CloudCommand.describe(reply))
            }
        }
    }

    static func describe(_ reply: JSONValue?) -> String {
        var lines: [String] = []
        if reply?["linked"]?.boolValue == true {
            lines.append("linked to \(reply?["url"]?.stringValue ?? "?") as \(reply?["device"]?.stringValue ?? "?") "
                + "(account \(reply?["account"]?.stringValue ?? "?")) since \(reply?["linked_at"]?.stringValue ?? "?")")
        } else {
            lines.append("not linked to a cloud account")
        }
        if reply?["overridden_by_upload_token"]?.boolValue == true {
            lines.append("[upload] token in the config is set and wins: uploads use it, not the link")
        }
        let inUse = reply?["in_use"]
        if let url = inUse?["url"]?.stringValue {
            lines.append("uploads go to \(url) with the token from \(inUse?["source"]?.stringValue == "link" ? "the link" : "[upload] token")"
                + (inUse?["has_token"]?.boolValue == true ? "" : " (none set)"))
        } else {
            lines.append("uploads are off: no [upload] url and no link")
        }
        return lines.joined(separator: "\n")
    }
}
