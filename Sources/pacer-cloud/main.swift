import ArgumentParser
import Foundation
import PacerCloud

/// pacer-cloud: the backend pacerd uploads runs, its live position and SOS alerts to.
@main
struct PacerCloudCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pacer-cloud",
        abstract: "Pacer's backend: runs, live position and SOS alerts from devices.",
        subcommands: [Serve.self, DeviceCommand.self])
}

struct DatabaseOption: ParsableArguments {
    @Option(help: "sqlite:/path/cloud.db (the default kind) or postgres://user[:password]@host:port/database, with ?sslmode=require, verify-ca or verify-full (&sslrootcert=CA.pem) for TLS")
    var database: String

    /// Opens and migrates the store, runs `body` (with a PostgreSQL pool running), closes it.
    func withStore<T: Sendable>(_ body: @Sendable (any CloudStore) async throws -> T) async throws -> T {
        let store = try DatabaseURL(database).open()
        if let postgres = store as? PostgresCloudStore {
            return try await postgres.withRunning {
                try await store.migrate()
                return try await body(store)
            }
        }
        try await store.migrate()
        return try await body(store)
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the HTTP server.")

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on.") var port = 8080
    @OptionGroup var database: DatabaseOption
    @Option(help: "Base URL of alert page links, e.g. https://cloud.example.org (default: http:// and the request's Host).")
    var publicURL: String?
    @Option(help: "SMTP relay for alert e-mails, host:port (plain SMTP unless --smtp-starttls).") var smtp: String?
    @Flag(help: "Require STARTTLS on --smtp, its certificate checked: a server without it gets nothing.")
    var smtpStarttls = false
    @Option(help: "PEM file of the CAs --smtp's certificate must chain to (default: the system's).") var smtpCa: String?
    @Option(help: "User name for SMTP AUTH (PLAIN or LOGIN); needs --smtp-starttls and --smtp-password-file.")
    var smtpUser: String?
    @Option(help: "File whose first line is the SMTP AUTH password (not an option: options show in ps).")
    var smtpPasswordFile: String?
    @Option(help: "From address of alert e-mails.") var mailFrom = "pacer-cloud@localhost"

    func run() async throws {
        var configuration = CloudConfiguration(publicURL: publicURL)
        if let smtp {
            let parts = smtp.split(separator: ":")
            guard parts.count == 2, let smtpPort = Int(parts[1]) else {
                throw ValidationError("--smtp '\(smtp)' is not host:port")
            }
            configuration.mail = MailSettings(host: String(parts[0]), port: smtpPort, from: mailFrom,
                                              security: smtpStarttls ? .starttls : .plain, credentials: try smtpCredentials(),
                                              trustRoots: smtpCa)
        } else if smtpStarttls || smtpUser != nil || smtpPasswordFile != nil || smtpCa != nil {
            throw ValidationError("--smtp-starttls, --smtp-user, --smtp-password-file and --smtp-ca need --smtp host:port")
        }
        let store = try DatabaseURL(database.database).open()
        try await CloudApplication.make(store: store, configuration: configuration, host: host, port: port).runService()
    }
}

extension Serve {
    /// --smtp-user with the password from --smtp-password-file; refused without STARTTLS.
    func smtpCredentials() throws -> MailSettings.Credentials? {
        guard let smtpUser else {
            if smtpPasswordFile != nil { throw ValidationError("--smtp-password-file needs --smtp-user") }
            return nil
        }
        guard smtpStarttls else { throw ValidationError("--smtp-user needs --smtp-starttls: the password never goes out in plain text") }
        guard let smtpPasswordFile else { throw ValidationError("--smtp-user needs --smtp-password-file") }
        let text: String
        do {
            text = try String(contentsOfFile: smtpPasswordFile, encoding: .utf8)
        } catch {
            throw ValidationError("cannot read --smtp-password-file \(smtpPasswordFile): \(error.localizedDescription)")
        }
        let password = String(text.prefix(while: { !$0.isNewline }))
        guard !password.isEmpty else { throw ValidationError("--smtp-password-file \(smtpPasswordFile) is empty") }
        return MailSettings.Credentials(username: smtpUser, password: password)
    }
}

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Manage the devices allowed to upload.", subcommands: [Add.self, List.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register a device and print its bearer token (shown only once).")
        @Argument(help: "The device's name (unique).") var name: String
        @Option(help: "E-mail address its alerts are sent to.") var email: String?
        @Option(help: "URL its alerts are POSTed to as JSON, signed with a secret printed once (Pacer-Signature, see README).")
        var webhook: String?
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let (name, email, webhook) = (name, email, webhook)
            let (device, token, webhookSecret) = try await database.withStore { store in
                try await CloudApplication.addDevice(store: store, name: name, email: email, webhook: webhook)
            }
            FileHandle.standardError.write(Data("device \(device.name) added (id \(device.id)); its token, shown only now:\n".utf8))
            print(token)
            if let webhookSecret {
                FileHandle.standardError.write(Data("the secret its webhooks are signed with (Pacer-Signature), shown only now:\n".utf8))
                print(webhookSecret)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the registered devices.")
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let devices = try await database.withStore { store in try await store.devices() }
            for device in devices {
                print([device.name, device.id, device.createdAt, device.email ?? "-", device.webhook ?? "-"].joined(separator: "\t"))
            }
        }
    }
}
