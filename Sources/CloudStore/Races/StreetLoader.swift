import CloudModel
import Foundation
import PostgresNIO
import SQLKit
import Threads

/// `pacer-cloud streets load FILE`: an OpenStreetMap extract (.osm, .osm.pbf, .osm.bz2: whatever
/// osmium reads) into the street graph `StreetRouter` routes over, in the PostgreSQL store.
///
/// 1. osmium keeps the ways tagged `highway` (and their nodes), then drops those closed to people
///    on foot (`foot=no`, `foot=private`, `foot=use_sidepath`), into OSM XML, which is all
///    osm2pgrouting reads.
/// 2. PostGIS and pgRouting are created when missing, in schema `streets_gis` (so that neither
///    PostGIS's `spatial_ref_sys` nor pgRouting's functions land among the store's tables in
///    `public`). That needs a superuser, or a superuser to have created them first; never in a
///    migration, so that a PostgreSQL server without the extensions keeps working.
/// 3. osm2pgrouting writes its tables (`ways`, `ways_vertices_pgr`, `configuration`,
///    `pointsofinterest`) into schema `streets_loading`, with a mapconfig for runners: Debian's
///    roads and paths less motorways and trunk roads (`mapconfigXML`; Debian's own
///    mapconfig_for_pedestrian.xml is not well-formed XML, osm2pgrouting 2.3.8 cannot read it).
/// 4. In one transaction `streets_loading` replaces `streets`: routes calculated meanwhile use the
///    old streets, or the new ones, never half of them.
///
/// One load at a time (an advisory lock); a failed load leaves the streets there were.
public enum StreetLoader {
    static let loadingSchema = "streets_loading"
    /// The advisory lock's two keys: a class apart from `Dialect.runWritesLockClass`, and streets.
    static let lock = (class: Int32(7_365_874), key: Int32(1))
    /// Ways with these `foot` values are left out before osm2pgrouting (which reads no access tags).
    static let footClosed = ["no", "private", "use_sidepath"]

    /// Loads `file` into the store at `url` (PostgreSQL); what is loaded now. `progress` hears
    /// each step, for the operator.
    public static func load(_ url: DatabaseURL, file: String, nowMs: Int64 = WallClock.milliseconds(),
                            progress: @escaping @Sendable (String) -> Void = { _ in }) async throws -> StreetData {
        guard case .postgres(let host, let port, let user, let password, let name, _, _) = url else {
            throw StoreError("calculated routes need the PostgreSQL store with pgRouting: this --database is SQLite, where races' paths are drawn or uploaded as GPX")
        }
        guard FileManager.default.isReadableFile(atPath: file) else { throw StoreError("cannot read the extract \(file)") }
        let osmium = try tool("osmium", package: "osmium-tool")
        let osm2pgrouting = try tool("osm2pgrouting", package: "osm2pgrouting")

        let work = FileManager.default.temporaryDirectory.appendingPathComponent("pacer-streets-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: work) }

        progress("osmium: keeping the streets of \(file), less those closed to people on foot")
        let highways = work + "/highways.osm.pbf", streets = work + "/streets.osm"
        try await run(osmium, ["tags-filter", "--no-progress", "--output=\(highways)", file, "w/highway"])
        try await run(osmium, ["tags-filter", "--no-progress", "--invert-match", "--output-format=osm", "--output=\(streets)", highways,
                               "w/foot=" + footClosed.joined(separator: ",")])
        let mapconfig = work + "/mapconfig_for_runners.xml"
        try Data(mapconfigXML.utf8).write(to: URL(fileURLWithPath: mapconfig))

        let database = try await url.openDatabase()
        return try await database.withRunning {
            try await database.checkReachable()
            return try await database.read { db in
                guard try await db.raw("SELECT pg_try_advisory_lock(\(literal: lock.class), \(literal: lock.key)) AS locked").first()?
                    .decode(column: "locked", as: Bool.self) == true else {
                    throw StoreError("another 'pacer-cloud streets load' is loading streets into this database: wait for it to finish")
                }
                do {
                    let loaded = try await load(db, streets: streets, file: file, nowMs: nowMs, progress: progress) { schema in
                        // osm2pgrouting passes an empty password of its own when it has no -W
                        // (which would show in ps), and libpq then reads the password file.
                        var environment = CloudBackup.environment(url)
                        environment["PGOPTIONS"] = "-c search_path=\(schema),\(StreetRouter.extensionSchema),public"
                        if let password {
                            let passfile = work + "/pgpass"
                            let escape = { (field: String) in field.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ":", with: "\\:") }
                            let line = [host, String(port), name, user, password].map(escape).joined(separator: ":") + "\n"
                            guard FileManager.default.createFile(atPath: passfile, contents: Data(line.utf8), attributes: [.posixPermissions: 0o600]) else {
                                throw StoreError("cannot write \(passfile)")
                            }
                            environment["PGPASSFILE"] = passfile
                        }
                        progress("osm2pgrouting: the streets into \(user)@\(host):\(port)/\(name), schema \(schema)")
                        try await run(osm2pgrouting, ["--file", streets, "--conf", mapconfig, "--schema", schema, "--dbname", name,
                                                      "--username", user, "--host", host, "--port", String(port)], environment: environment)
                    }
                    _ = try? await db.raw("SELECT pg_advisory_unlock(\(literal: lock.class), \(literal: lock.key))").run()
                    return loaded
                } catch {
                    _ = try? await db.raw("SELECT pg_advisory_unlock(\(literal: lock.class), \(literal: lock.key))").run()
                    throw error
                }
            }
        }
    }

    /// The extensions, osm2pgrouting into the loading schema, the check, the swap.
    private static func load(_ db: any SQLDatabase, streets: String, file: String, nowMs: Int64, progress: @Sendable (String) -> Void,
                             osm2pgrouting: @Sendable (String) async throws -> Void) async throws -> StreetData {
        try await createExtensions(db)
        let (schema, loading) = (StreetRouter.schema, loadingSchema)
        try await db.raw("DROP SCHEMA IF EXISTS \(ident: loading) CASCADE").run()
        try await db.raw("CREATE SCHEMA \(ident: loading)").run()
        do {
            try await osm2pgrouting(loading)
            guard let counts = try await db.raw("""
                SELECT (SELECT COUNT(*) FROM \(ident: loading).ways) AS streets, (SELECT COUNT(*) FROM \(ident: loading).ways_vertices_pgr) AS crossings
                """).first() else { throw StoreError("osm2pgrouting wrote no tables") }
            let data = StreetData(file: (file as NSString).lastPathComponent, loadedAtMs: nowMs, streets: try counts.decode(column: "streets", as: Int.self),
                                  crossings: try counts.decode(column: "crossings", as: Int.self))
            guard data.streets > 0 else {
                throw StoreError("\(file) has no streets a runner may use (ways tagged highway, not motorways nor trunk roads, not foot=no): nothing loaded, the streets there were are kept")
            }
            try await db.raw("CREATE TABLE \(ident: loading).streets_loaded (file TEXT NOT NULL, loaded_at_ms BIGINT NOT NULL, streets INTEGER NOT NULL, crossings INTEGER NOT NULL)").run()
            try await db.raw("INSERT INTO \(ident: loading).streets_loaded VALUES (\(bind: data.file), \(bind: data.loadedAtMs), \(bind: data.streets), \(bind: data.crossings))").run()
            progress("replacing the streets loaded before (if any): \(data.streets) street segments, \(data.crossings) crossings")
            try await db.raw("BEGIN").run()
            do {
                try await db.raw("DROP SCHEMA IF EXISTS \(ident: schema) CASCADE").run()
                try await db.raw("ALTER SCHEMA \(ident: loading) RENAME TO \(ident: schema)").run()
                try await db.raw("COMMIT").run()
            } catch {
                _ = try? await db.raw("ROLLBACK").run()
                throw error
            }
            return data
        } catch {
            _ = try? await db.raw("DROP SCHEMA IF EXISTS \(ident: loading) CASCADE").run()
            throw error
        }
    }

    /// PostGIS and pgRouting, when the database has them not.
    private static func createExtensions(_ db: any SQLDatabase) async throws {
        let present = Set(try await db.raw("SELECT extname FROM pg_extension WHERE extname IN ('postgis', 'pgrouting')").all()
            .map { try $0.decode(column: "extname", as: String.self) })
        guard present.count < 2 else { return }
        let gis = StreetRouter.extensionSchema
        do {
            try await db.raw("CREATE SCHEMA IF NOT EXISTS \(ident: gis)").run()
            try await db.raw("CREATE EXTENSION IF NOT EXISTS postgis SCHEMA \(ident: gis)").run()
            try await db.raw("CREATE EXTENSION IF NOT EXISTS pgrouting SCHEMA \(ident: gis)").run()
        } catch {
            throw StoreError("""
                cannot create the PostGIS and pgRouting extensions: \(serverMessage(error)). On the database server install \
                postgresql-15-postgis-3 and postgresql-15-pgrouting, then as a superuser in this database run: CREATE SCHEMA \(gis); \
                CREATE EXTENSION postgis SCHEMA \(gis); CREATE EXTENSION pgrouting SCHEMA \(gis); GRANT USAGE ON SCHEMA \(gis) TO <the store's user>;
                """)
        }
    }

    static func serverMessage(_ error: any Error) -> String {
        if let error = error as? PSQLError, let message = error.serverInfo?[.message] { return message }
        return String(describing: error)
    }

    /// `name` on PATH (or in /usr/bin), or the operator's error naming its Debian package.
    static func tool(_ name: String, package: String) throws -> String {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin"]
        for directory in directories where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
            return directory + "/" + name
        }
        throw StoreError("\(name) is not installed (not on PATH): apt-get install \(package)")
    }

    /// Whether this machine can load streets: osmium and osm2pgrouting installed (PostGIS and
    /// pgRouting are the database server's to have).
    public static var toolsInstalled: Bool {
        (try? tool("osmium", package: "osmium-tool")) != nil && (try? tool("osm2pgrouting", package: "osm2pgrouting")) != nil
    }

    /// Runs `executable` on a thread of its own (it blocks for as long as the tool runs); its
    /// output's last lines become the error when it fails.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws {
        let name = (executable as NSString).lastPathComponent
        let output: (status: Int32, text: String) = try await withCheckedThrowingContinuation { continuation in
            do {
                try DetachedThread.start {
                    continuation.resume(with: Result {
                        let process = Process()
                        process.executableURL = URL(fileURLWithPath: executable)
                        process.arguments = arguments
                        if let environment { process.environment = environment }
                        let pipe = Pipe()
                        process.standardOutput = pipe
                        process.standardError = pipe
                        process.standardInput = FileHandle.nullDevice
                        try process.run()
                        let data = pipe.fileHandleForReading.readDataToEndOfFile()
                        process.waitUntilExit()
                        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
                    })
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        guard output.status == 0 else {
            let tail = output.text.split(whereSeparator: \.isNewline).suffix(8).joined(separator: "\n")
            throw StoreError("\(name) failed (exit \(output.status)): \(tail)")
        }
    }

    /// osm2pgrouting's mapconfig for runners: the ways a person on foot may take. Debian's
    /// pedestrian list (motorways and trunk roads left out), with its ids.
    static let mapconfigXML = """
        <?xml version="1.0" encoding="UTF-8"?>
        <configuration>
          <tag_name name="highway" id="1">
            <tag_value name="road" id="100" />
            <tag_value name="primary" id="106" />
            <tag_value name="primary_link" id="107" />
            <tag_value name="secondary" id="108" />
            <tag_value name="secondary_link" id="124" />
            <tag_value name="tertiary" id="109" />
            <tag_value name="tertiary_link" id="125" />
            <tag_value name="residential" id="110" />
            <tag_value name="living_street" id="111" />
            <tag_value name="service" id="112" />
            <tag_value name="track" id="113" />
            <tag_value name="pedestrian" id="114" />
            <tag_value name="services" id="115" />
            <tag_value name="path" id="117" />
            <tag_value name="cycleway" id="118" />
            <tag_value name="footway" id="119" />
            <tag_value name="bridleway" id="120" />
            <tag_value name="byway" id="121" />
            <tag_value name="steps" id="122" />
            <tag_value name="unclassified" id="123" />
          </tag_name>
        </configuration>

        """
}
