import ArgumentParser
import CloudModel
import CloudStore
import Foundation
import PacerCloud

/// pacer-cloud: the backend pacerd uploads runs, its live position and SOS alerts to.
@main
struct PacerCloudCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pacer-cloud",
        abstract: "Pacer's backend: runs, live position and SOS alerts from devices.",
        subcommands: [Serve.self, DeviceCommand.self, UserCommand.self, NoticeCommand.self, BackupCommand.self, RestoreCommand.self,
                      StreetsCommand.self])
}

struct DatabaseOption: ParsableArguments {
    @Option(help: "sqlite:/path/cloud.db (the default kind) or postgres://user[:password]@host:port/database, with ?sslmode=require, verify-ca or verify-full (&sslrootcert=CA.pem) for TLS")
    var database: String?
    @Option(help: "The server's config file (/etc/pacer-cloud/pacer-cloud.conf): its database line is used unless --database is given.")
    var config: String?

    /// --database, else the config file's `database`.
    func databaseURL() throws -> String {
        if let database { return database }
        if let config {
            let arguments = try ServeConfigFile.arguments(try ConfigText.read(config), file: config)
            if let flag = arguments.lastIndex(of: "--database"), flag + 1 < arguments.count { return arguments[flag + 1] }
            throw ValidationError("\(config) has no database line; give --database")
        }
        throw ValidationError("give --database URL or --config FILE")
    }

    /// Opens and migrates the store, runs `body` (with a PostgreSQL pool running), closes it.
    func withStore<T: Sendable>(_ body: @Sendable (CloudStore) async throws -> T) async throws -> T {
        let store = try await CloudStore.open(DatabaseURL(try databaseURL()))
        do {
            let value = try await store.withRunning {
                try await store.migrate()
                return try await body(store)
            }
            await store.database.close()
            return value
        } catch {
            await store.database.close()
            throw error
        }
    }
}

enum ConfigText {
    static func read(_ path: String) throws -> String {
        do { return try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw ValidationError("cannot read the config file \(path): \(error.localizedDescription)")
        }
    }
}

/// A rate limit option: COUNT/SECONDS ("60/60") or off.
struct RateOption: ExpressibleByArgument {
    var limit: RateLimit?

    init?(argument: String) {
        if argument == "off" {
            limit = nil
        } else if let parsed = RateLimit(parsing: argument) {
            limit = parsed
        } else {
            return nil
        }
    }

    static let valueName = "COUNT/SECONDS|off"
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the HTTP server.")

    @Option(help: "A file of 'option = value' lines, one per option below (e.g. /etc/pacer-cloud/pacer-cloud.conf); options given here win.")
    var config: String?
    @Option(help: "Address to listen on. Any but a loopback address needs --public-url.") var host = "127.0.0.1"
    @Option(help: "Port to listen on.") var port = 8080
    @Option(help: "sqlite:/path/cloud.db (the default kind) or postgres://user[:password]@host:port/database")
    var database: String?
    @Option(help: "Base URL of alert page links, e.g. https://cloud.example.org: the only one (a request's Host is never used). Required unless --host is a loopback address, where links name it.")
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
    @Option(help: "A reverse proxy's address whose X-Forwarded-For names the client (repeatable); from any other peer the header is ignored.")
    var trustedProxy: [String] = []
    @Option(help: ArgumentHelp("Alert page lookups per client address: COUNT at once, refilled at COUNT per SECONDS (default 60/60).",
                               valueName: RateOption.valueName))
    var alertPageRate: RateOption?
    @Option(help: ArgumentHelp("Uploads (PUT) per device (default 600/60).", valueName: RateOption.valueName))
    var uploadRateDevice: RateOption?
    @Option(help: ArgumentHelp("Uploads (PUT) per client address (default 1200/60). Alerts are never limited.", valueName: RateOption.valueName))
    var uploadRateAddress: RateOption?
    @Option(help: ArgumentHelp("Log-in attempts per account (default 10/900: 10, then one every 90 s).", valueName: RateOption.valueName))
    var loginRateAccount: RateOption?
    @Option(help: ArgumentHelp("Log-in attempts per client address (default 10/900).", valueName: RateOption.valueName))
    var loginRateAddress: RateOption?
    @Option(help: ArgumentHelp("Device link attempts (POST /v1/link) per client address (default 10/600).", valueName: RateOption.valueName))
    var linkRateAddress: RateOption?
    @Option(help: "Seconds without a request after which a web session ends (default 1800).") var sessionIdle = 1800
    @Option(help: "Seconds after log-in at which a web session ends however busy (default 43200, 12 h).") var sessionMax = 43_200
    @Option(help: "The run page's map tiles, a URL template with {z}, {x} and {y} ({s}: a subdomain), or 'none' for the track on a plain background.")
    var tileUrl = MapSettings.defaultTileURL
    @Option(help: "The map tiles' attribution, shown on the map (default: OpenStreetMap's).") var tileAttribution = MapSettings.defaultAttribution
    @Option(help: "Where libjs-leaflet and libjs-chart.js are installed.") var assetsDir = MapSettings.defaults.assetsDirectory
    @Option(help: "Serve /metrics (Prometheus' text format) on a listener of its own, HOST:PORT (e.g. 127.0.0.1:9464); it needs the token too when --metrics-token-file is given.")
    var metricsListen: String?
    @Option(help: "File whose first line is the bearer token /metrics needs: GET /metrics on the main address with Authorization: Bearer TOKEN. Without this or --metrics-listen, /metrics is not served.")
    var metricsTokenFile: String?
    @Option(help: "Open client connections at once; more are answered 503 and closed. Must fit under the open-file limit with 256 to spare (LimitNOFILE=).")
    var maxConnections = ConnectionLimits.defaults.maxConnections
    @Option(help: "Open connections from one client address (a --trusted-proxy is held only to --max-connections).")
    var maxConnectionsPerAddress = ConnectionLimits.defaults.maxConnectionsPerAddress
    @Option(help: "Seconds a client has to send a request's headers.") var headerTimeout = 10.0
    @Option(help: "Seconds an idle keep-alive connection stays open.") var idleTimeout = 75.0
    @Option(help: "Seconds a request body may pause; after that long it must also average 1 KiB/s.") var bodyTimeout = 30.0
    @Option(help: "Long-polls (GET /v1/device/answers?wait=) one device holds at once; more get 429.")
    var longPollsPerDevice = ConnectionLimits.defaults.longPollsPerDevice
    @Option(help: "Dashboard event streams one web session holds at once; more get 429.")
    var streamsPerSession = ConnectionLimits.defaults.streamsPerSession

    func run() async throws {
        guard let config else { return try await serve() }
        // The file's lines as options, then this command line's (after "serve"), so those win.
        let fileArguments = try ServeConfigFile.arguments(try ConfigText.read(config), file: config)
        let given = CommandLine.arguments.drop(while: { $0 != "serve" }).dropFirst()
        var merged: Serve
        do { merged = try Serve.parse(fileArguments + given) } catch {
            throw ValidationError("\(config): \(Serve.message(for: error))")
        }
        merged.config = nil
        try await merged.serve()
    }

    private func serve() async throws {
        guard let database else { throw ValidationError("give --database URL (or a database line in --config FILE)") }
        var limits = RateLimits.defaults
        if let alertPageRate { limits.alertPagePerAddress = alertPageRate.limit }
        if let uploadRateDevice { limits.uploadPerDevice = uploadRateDevice.limit }
        if let uploadRateAddress { limits.uploadPerAddress = uploadRateAddress.limit }
        if let loginRateAccount { limits.loginPerAccount = loginRateAccount.limit }
        if let loginRateAddress { limits.loginPerAddress = loginRateAddress.limit }
        if let linkRateAddress { limits.linkPerAddress = linkRateAddress.limit }
        guard (60...86_400 * 30).contains(sessionIdle), (60...86_400 * 365).contains(sessionMax), sessionIdle <= sessionMax else {
            throw ValidationError("--session-idle and --session-max are seconds from 60 (idle up to 30 days, max up to a year), idle at most max")
        }
        var proxies: Set<String> = []
        for proxy in trustedProxy {
            guard let address = ClientAddress.normalized(proxy) else {
                throw ValidationError("--trusted-proxy '\(proxy)' is not an IP address")
            }
            proxies.insert(address)
        }
        if tileUrl != "none", let problem = MapSettings.problem(tileURL: tileUrl) { throw ValidationError(problem) }
        let seconds = { (value: Double) in Duration.milliseconds(value.isFinite && abs(value) < 1e9 ? Int64((value * 1000).rounded()) : -1) }
        let connections = ConnectionLimits(
            maxConnections: maxConnections, maxConnectionsPerAddress: maxConnectionsPerAddress, headerTimeout: seconds(headerTimeout),
            idleTimeout: seconds(idleTimeout), bodyTimeout: seconds(bodyTimeout), longPollsPerDevice: longPollsPerDevice,
            streamsPerSession: streamsPerSession)
        if let problem = connections.problems.first { throw ValidationError(problem) }
        let map = MapSettings(tileURL: tileUrl == "none" ? nil : tileUrl, tileAttribution: tileAttribution, assetsDirectory: assetsDir)
        var configuration = CloudConfiguration(publicURL: publicURL, rateLimits: limits, trustedProxies: proxies,
                                               sessions: SessionSettings(idle: .seconds(sessionIdle), absolute: .seconds(sessionMax)), map: map)
        configuration.connections = connections
        configuration.metricsAccess = try metricsSettings()
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
        do {
            _ = try configuration.linkBase(host: host, port: port)
        } catch {
            // EX_CONFIG: the unit does not restart on it (RestartPreventExitStatus=78).
            FileHandle.standardError.write(Data("pacer-cloud: \(error)\n".utf8))
            throw ExitCode(78)
        }
        let store = try await CloudStore.open(DatabaseURL(database))
        // Refused (the open-file limit too low for any connection cap): the operator's to fix (EX_CONFIG).
        try await Self.exitingOnConfigurationError { try CloudApplication.make(store: store, configuration: configuration, host: host, port: port) }
            .runService()
    }
}

extension Serve {
    /// --metrics-listen and --metrics-token-file.
    func metricsSettings() throws -> MetricsSettings {
        var settings = MetricsSettings()
        if let metricsListen {
            guard let listen = MetricsSettings.parseListen(metricsListen) else {
                throw ValidationError("--metrics-listen '\(metricsListen)' is not HOST:PORT (e.g. 127.0.0.1:9464)")
            }
            settings.listen = listen
        }
        if let metricsTokenFile {
            let text: String
            do { text = try String(contentsOfFile: metricsTokenFile, encoding: .utf8) } catch {
                throw ValidationError("cannot read --metrics-token-file \(metricsTokenFile): \(error.localizedDescription)")
            }
            let token = String(text.prefix(while: { !$0.isNewline }))
            guard token.count >= MetricsSettings.minimumTokenLength, token.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }),
                  token.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value < 127 }) else {
                throw ValidationError("--metrics-token-file \(metricsTokenFile): its first line must be a token of at least \(MetricsSettings.minimumTokenLength) printable ASCII characters without spaces (e.g. openssl rand -hex 32)")
            }
            settings.token = token
        }
        return settings
    }

    static func exitingOnConfigurationError<T>(_ make: () throws -> T) throws -> T {
        do { return try make() } catch {
            FileHandle.standardError.write(Data("pacer-cloud: \(error)\n".utf8))
            throw ExitCode(78)
        }
    }

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
        commandName: "device", abstract: "Manage the devices allowed to upload.", subcommands: [Add.self, List.self, Revoke.self, Remove.self, Assign.self])

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
            let devices = try await database.withStore { store in try await store.devices.devices() }
            let owners = Dictionary(uniqueKeysWithValues: try await database.withStore { store in try await store.accounts.accounts() }.map { ($0.id, $0.email) })
            for device in devices {
                print([device.name, device.id, device.createdAt, device.email ?? "-", device.webhook ?? "-", device.revoked ? "revoked" : "active",
                       device.accountID.flatMap { owners[$0] } ?? "-"]
                    .joined(separator: "\t"))
            }
        }
    }

    struct Assign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a device to an account: its runs and alerts, past and future, belong to that account.")
        @Argument(help: "The device's name.") var name: String
        @Argument(help: "The account's e-mail address.") var email: String
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let (name, email) = (name, email)
            let address = try EmailAddress.normalized(email).get()
            try await database.withStore { store in
                let owner = try await UserCommand.account(store, address)
                guard try await store.devices.assignDevice(name: name, accountID: owner.id) else {
                    throw ValidationError("no device is named \(DeviceCommand.quoted(name))")
                }
            }
            print("device \(name) now belongs to \(address), with its runs and alerts")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a device's token: its next request gets 401, on every instance. Its runs and alerts are kept.")
        @Argument(help: "The device's name.") var name: String
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let name = name
            guard try await database.withStore({ store in try await store.devices.revokeDevice(name: name) }) else {
                throw ValidationError("no device is named \(DeviceCommand.quoted(name))")
            }
            print("device \(name): token revoked; its requests get 401 from now on. Its runs and alerts are kept "
                + "(pacer-cloud device remove \(name) deletes them).")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a device: its token, runs, position, alerts and their pages are deleted.")
        @Argument(help: "The device's name.") var name: String
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let name = name
            guard let removed = try await database.withStore({ store in try await store.removeDevice(name: name) }) else {
                throw ValidationError("no device is named \(DeviceCommand.quoted(name))")
            }
            print("device \(name) removed with its token: deleted \(removed.runs) runs (\(removed.chunks) chunks), "
                + "\(removed.positions) live position, \(removed.alerts) alerts (\(removed.alertMessages) messages; their pages now answer 404). "
                + "E-mails and webhooks of its alerts already queued are still sent.")
        }
    }

    static func quoted(_ name: String) -> String { "'" + String(name.prefix(64)) + "'" }
}


/// Accounts for operators: made, listed, confirmed and deleted without the web pages.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Manage accounts.", subcommands: [Add.self, List.self, Confirm.self, Delete.self])

    /// The account with the (normalised) address, or the operator's error naming it.
    static func account(_ store: CloudStore, _ address: String) async throws -> Account {
        guard let stored = try await store.accounts.account(email: address) else {
            throw ValidationError("no account has the address \(DeviceCommand.quoted(address))")
        }
        return stored.account
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an account. The password is read from the first line of standard input (an option would show in ps).")
        @Argument(help: "The account's e-mail address (its log-in name).") var email: String
        @Option(help: "The name its pages show (default: the address's part before @).") var displayName: String?
        @Option(help: "Its time zone, e.g. Europe/Rome.") var timezone = "UTC"
        @Flag(help: "Mark the address confirmed now (no confirmation e-mail).") var confirmed = false
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw ValidationError("give the password on standard input, e.g. printf '%s\\n' \"$PASSWORD\" | pacer-cloud user add ...")
            }
            let (email, displayName, timezone, confirmed) = (email, displayName, timezone, confirmed)
            let account = try await database.withStore { store in
                try await Accounts.create(store: store, email: email, password: line, displayName: displayName, timezone: timezone,
                                          confirmed: confirmed)
            }
            print("account \(account.email) added (id \(account.id))\(account.confirmed ? ", confirmed" : "")")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List accounts: e-mail, id, created, confirmed, display name, time zone.")
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            for account in try await database.withStore({ store in try await store.accounts.accounts() }) {
                print([account.email, account.id, account.createdAt, account.confirmed ? "confirmed" : "unconfirmed", account.displayName,
                       account.timezone].joined(separator: "\t"))
            }
        }
    }

    struct Confirm: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Mark an account's address confirmed.")
        @Argument(help: "The account's e-mail address.") var email: String
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let address = try EmailAddress.normalized(email).get()
            _ = try await database.withStore { store in try await store.accounts.confirmAccount(id: try await UserCommand.account(store, address).id) }
            print("account \(address) confirmed")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an account with every device of it and their runs, positions and alerts.")
        @Argument(help: "The account's e-mail address.") var email: String
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let address = try EmailAddress.normalized(email).get()
            let removed = try await database.withStore { store -> StoreCounts in
                let account = try await UserCommand.account(store, address)
                guard let removed = try await store.deleteAccount(id: account.id) else {
                    throw ValidationError("account \(address) was deleted meanwhile")
                }
                return removed
            }
            print("account \(address) deleted with \(removed.devices) devices: \(removed.runs) runs (\(removed.chunks) chunks), "
                + "\(removed.positions) live position, \(removed.alerts) alerts (\(removed.alertMessages) messages)")
        }
    }
}

/// Notices for devices to say once (the sync channel's `notices` section).
struct NoticeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "notice", abstract: "Send short spoken notices to devices.",
                                                    subcommands: [Send.self])

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Queue a notice the device says once, at its next sync (at most 200 characters, cleaned for speech).")
        @Argument(help: "A device's name, or an account's e-mail address (every device of it).") var target: String
        @Argument(help: "What the device says.") var text: String
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let (target, text) = (target, text)
            let queued: [StoredNotice]
            do {
                queued = try await database.withStore { store in try await Notices.send(store: store, to: target, text: text) }
            } catch let error as StoreError {
                throw ValidationError(error.message)
            }
            for notice in queued { print("notice \(notice.id) queued: \(notice.text)") }
        }
    }
}

/// `pacer-cloud backup FILE`: a consistent copy, also while the server runs.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Back up the database to a new file: SQLite's online backup (safe while the server runs) or pg_dump -Fc for PostgreSQL.")
    @Argument(help: "The backup file to write; it must not exist.") var file: String
    @OptionGroup var database: DatabaseOption

    func run() async throws {
        let url = try DatabaseURL(try database.databaseURL())
        do {
            print("backed up to \(try await CloudBackup.backup(url, to: file))")
        } catch let error as StoreError {
            throw ValidationError(error.message)
        }
    }
}

/// `pacer-cloud restore FILE`: the database replaced by a backup (the server stopped first).
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore a backup made by 'pacer-cloud backup' into the database (stop the server first). Refused when the database holds data, unless --force.")
    @Argument(help: "The backup file.") var file: String
    @Flag(help: "Replace whatever the database holds.") var force = false
    @OptionGroup var database: DatabaseOption

    func run() async throws {
        let url = try DatabaseURL(try database.databaseURL())
        do {
            try await CloudBackup.restore(url, from: file, force: force)
        } catch let error as StoreError {
            throw ValidationError(error.message)
        }
        print("restored \(file)")
    }
}

/// `pacer-cloud streets load FILE`: the streets races' calculated routes go over (PostgreSQL with pgRouting).
struct StreetsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "streets", abstract: "The streets races' calculated routes go over (PostgreSQL with PostGIS and pgRouting only).",
        subcommands: [Load.self, Status.self])

    struct Load: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Load an OpenStreetMap extract (.osm, .osm.pbf) with osmium and osm2pgrouting, replacing the streets loaded before (the server may run meanwhile). Creates PostGIS and pgRouting in schema streets_gis when missing, which takes a superuser.")
        @Argument(help: "The extract: a city or region (osm2pgrouting holds it all in memory), e.g. cut from Geofabrik's with osmium extract -b.")
        var file: String
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let url = try DatabaseURL(try database.databaseURL())
            let started = ContinuousClock.now
            let loaded: StreetData
            do {
                loaded = try await StreetLoader.load(url, file: file) { step in FileHandle.standardError.write(Data("streets: \(step)\n".utf8)) }
            } catch let error as StoreError {
                throw ValidationError(error.message)
            }
            print("loaded \(loaded.file): \(loaded.streets) street segments, \(loaded.crossings) crossings (\((ContinuousClock.now - started).components.seconds) s); races' routes are calculated over them from now on")
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Say which streets are loaded.")
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let url = try DatabaseURL(try database.databaseURL())
            guard case .postgres = url else {
                print("no streets: the store is SQLite, where races' paths are drawn or uploaded as GPX (calculated routes need PostgreSQL with pgRouting)")
                return
            }
            guard let loaded = try await database.withStore({ store in try await store.streets.loaded() }) else {
                print("no streets loaded: races' routes cannot be calculated until 'pacer-cloud streets load FILE.osm'")
                return
            }
            let when = Date(timeIntervalSince1970: Double(loaded.loadedAtMs) / 1000).ISO8601Format()
            print("\(loaded.file), loaded \(when): \(loaded.streets) street segments, \(loaded.crossings) crossings")
        }
    }
}
