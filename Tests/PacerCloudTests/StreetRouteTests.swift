import CloudModel
import CloudStore
import Foundation
import PacerTestSupport
import Testing

/// Loading streets needs Debian's osmium-tool and osm2pgrouting here and PostGIS and pgRouting for
/// the tests' PostgreSQL 15: without them those tests are skipped, saying so (tools/setup installs them).
let streetsInstalled = StreetLoader.toolsInstalled
    && ["postgis", "pgrouting"].allSatisfy { FileManager.default.fileExists(atPath: "/usr/share/postgresql/15/extension/\($0).control") }

/// Races' calculated routes (#34): tools/osm-grid's street grid loaded with the loader
/// (osmium, osm2pgrouting) into a database of its own on the tests' PostgreSQL, routed over with
/// pgRouting. The grid: 5 east-west rows and 5 north-south columns 100 m apart; row 2 is a
/// motorway and column 0 is foot=no (neither may be run along, both may be crossed), column 4 a
/// footway. Expected lengths are the grid's own shortest paths in blocks (`Grid.blocks`).
@Suite("races: calculated routes over streets (pgRouting)", .timeLimit(.minutes(10)))
struct StreetRouteTests {
    @Test("a route follows the streets, is as long as the grid's shortest path, and goes round the motorway and the foot=no street",
          .enabled(if: streetsInstalled, "needs osmium-tool, osm2pgrouting, postgresql-15-postgis-3 and postgresql-15-pgrouting: tools/setup installs them"))
    func routesOverTheGrid() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-streets")
        let grid = try await Grid.make(in: directory, name: "grid", ["--motorway-row", "2", "--no-foot-column", "0"])
        try await Self.withStreets(grid.file) { store in
            let router = store.streets
            let loaded = try #require(try await router.loaded())
            #expect(loaded.file == "grid.osm" && loaded.streets > 0 && loaded.crossings > 0)

            // Along the motorway (row 2, from column 1 to 4): 3 blocks on it, 5 round it.
            let motorway = try await router.route(through: [grid.at(2, 1), grid.at(2, 4)])
            try grid.check(motorway, blocks: 5)
            // Along the foot=no street (column 0, from row 0 to 4): 4 blocks on it, 6 round it.
            let noFoot = try await router.route(through: [grid.at(0, 0), grid.at(4, 0)])
            try grid.check(noFoot, blocks: 6)

            // The start, three stages (the second on the footway, the first 20 m north and 5 m
            // east of its crossing: it joins the streets there) and the arrival.
            let waypoints = [grid.at(0, 1), grid.at(3, 3, northM: 20, eastM: 5), grid.at(1, 4), grid.at(4, 2), grid.at(0, 3)]
            let route = try await router.route(through: waypoints)
            let crossings = [(0, 1), (3, 3), (1, 4), (4, 2), (0, 3)]
            #expect(route.snapped.count == 5 && zip(route.snapped, crossings).allSatisfy { Grid.same($0, grid.at($1.0, $1.1)) }, "\(route.snapped)")
            let legs = zip(crossings, crossings.dropFirst()).map { grid.blocks(from: $0.0, to: $0.1) }
            #expect(legs == [5, 3, 5, 5])
            try grid.check(route, blocks: legs.reduce(0, +))
            for (leg, blocks) in legs.enumerated() {
                #expect(abs(route.legLengthsM[leg] - Double(blocks) * grid.spacing) < 1, "leg \(leg): \(route.legLengthsM[leg]) m")
            }
            // It passes through each stage in order.
            var from = 0
            for point in route.snapped {
                let found = try #require(route.points[from...].firstIndex { Grid.same($0, point) }, "\(point) not on the path after point \(from)")
                from = found
            }
        }
    }

    @Test("the waypoint at fault is named: far from every street, unconnected, over the limits",
          .enabled(if: streetsInstalled, "needs osmium-tool, osm2pgrouting, postgresql-15-postgis-3 and postgresql-15-pgrouting: tools/setup installs them"))
    func refusals() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-streets")
        // Two districts 3 km apart that no street joins.
        let west = try await Grid.make(in: directory, name: "west", [])
        let east = try await Grid.make(in: directory, name: "east", ["--origin", "45.4642,9.23", "--first-id", "100000"])
        let merged = directory.file("districts.osm.pbf")
        let merge = try await offPool { try BlockingCommand.run("/usr/bin/osmium", ["merge", "--no-progress", west.file, east.file, "-o", merged]) }
        #expect(merge.succeeded, "\(merge)")
        try await Self.withStreets(merged) { store in
            let router = store.streets
            let far = west.at(4, 4, northM: 5_000)
            try await Self.expectRefusal(.farFromStreets, waypoint: 2, ["stage 2", "from the nearest street", "200 m"]) {
                _ = try await router.route(through: [west.at(0, 0), west.at(1, 1), far, west.at(4, 4)])
            }
            try await Self.expectRefusal(.farFromStreets, waypoint: 1, ["the arrival"]) {
                _ = try await router.route(through: [west.at(0, 0), far])
            }
            try await Self.expectRefusal(.unconnected, waypoint: 2, ["no street path joins stage 1 to the arrival"]) {
                _ = try await router.route(through: [west.at(0, 0), west.at(4, 4), east.at(0, 0)])
            }
            // 566 m in a straight line, 800 m over the streets.
            try await Self.expectRefusal(.tooLong, waypoint: 1, ["over the limit of 0.6 km"]) {
                _ = try await router.route(through: [west.at(0, 0), west.at(4, 4)], maxLengthM: 600)
            }
            try await Self.expectRefusal(.tooLong, ["even in straight lines", "over the limit of 50.0 km"]) {
                _ = try await router.route(through: [west.at(0, 0), LatLon(lat: 46.0, lon: 9.19)])
            }
            try await Self.expectRefusal(.waypointCount, ["2 to 12 points, not 13"]) {
                _ = try await router.route(through: Array(repeating: west.at(0, 0), count: 13))
            }
            try await Self.expectRefusal(.invalidWaypoint, waypoint: 1, ["stage 1 is not a position"]) {
                _ = try await router.route(through: [west.at(0, 0), LatLon(lat: 91, lon: 0), west.at(4, 4)])
            }
            // Within one district, it routes.
            try east.check(try await router.route(through: [east.at(0, 0), east.at(4, 4)]), blocks: 8)
        }
    }

    @Test("pacer-cloud streets load and status, as an operator runs them: a second load replaces the first",
          .enabled(if: streetsInstalled, "needs osmium-tool, osm2pgrouting, postgresql-15-postgis-3 and postgresql-15-pgrouting: tools/setup installs them"))
    func commandLine() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-streets")
        let small = try await Grid.make(in: directory, name: "small", ["--rows", "3", "--columns", "3", "--motorway-row", "none"])
        let large = try await Grid.make(in: directory, name: "large", ["--rows", "6", "--columns", "4", "--motorway-row", "none"])
        let database = ["--database", try await Cloud.freshPostgresDatabase()]
        let none = try await CLITests.run(["streets", "status"] + database)
        #expect(none.status == 0 && none.stdout.contains("no streets loaded"), "\(none.stdout)\(none.stderr)")
        for grid in [small, large] {
            let load = try await CLITests.run(["streets", "load", grid.file] + database)
            #expect(load.status == 0, "\(load.stderr)")
            // 3 x 3: 12 blocks, 9 crossings; 6 x 4: 38 blocks, 24 crossings.
            let (blocks, crossings) = grid.rows == 3 ? (12, 9) : (38, 24)
            #expect(load.stdout.contains("loaded \(grid.name).osm: \(blocks) street segments, \(crossings) crossings"), "\(load.stdout)")
            #expect(load.stderr.contains("osm2pgrouting"), "\(load.stderr)")
            let status = try await CLITests.run(["streets", "status"] + database)
            #expect(status.status == 0 && status.stdout.contains("\(grid.name).osm, loaded ") && status.stdout.contains("\(blocks) street segments"),
                    "\(status.stdout)\(status.stderr)")
        }
        let store = try await CloudStore.open(DatabaseURL(database[1] + "?pool_max_conns=2"))
        try await store.withRunning {
            try await store.migrate()
            try large.check(try await store.streets.route(through: [large.at(0, 0), large.at(5, 3)]), blocks: 8)
            // The store's own tables are where they were; the streets' are in their own schemas.
            let schemas = try await store.database.read { db in
                try await db.raw("SELECT DISTINCT table_schema FROM information_schema.tables WHERE table_name IN ('ways', 'spatial_ref_sys', 'device')")
                    .all().map { try $0.decode(column: "table_schema", as: String.self) }
            }
            #expect(Set(schemas) == ["public", "streets", "streets_gis"])
        }
        let sqlite = try await CLITests.run(["streets", "load", small.file, "--database", "sqlite:" + directory.file("cloud.db")])
        #expect(sqlite.status != 0 && sqlite.stderr.contains("calculated routes need the PostgreSQL store with pgRouting"), "\(sqlite.stderr)")
        let missing = try await CLITests.run(["streets", "load", directory.file("nowhere.osm")] + database)
        #expect(missing.status != 0 && missing.stderr.contains("cannot read the extract"), "\(missing.stderr)")
    }

    @Test("on SQLite a calculated route is refused, saying how to make the path instead")
    func sqliteRefuses() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-streets")
        let store = try await CloudStore.open(.sqlite(path: directory.file("cloud.db")))
        try await Self.expectRefusal(.unavailable, ["calculated routes need the PostgreSQL store with pgRouting", "draw the path or upload a GPX"]) {
            _ = try await store.streets.route(through: [LatLon(lat: 45.46, lon: 9.19), LatLon(lat: 45.47, lon: 9.2)])
        }
        #expect(try await store.streets.loaded() == nil)
        await store.database.close()
    }

    @Test("on PostgreSQL without streets loaded (nor PostGIS), a calculated route says so")
    func noStreetData() async throws {
        let store = try await CloudStore.open(DatabaseURL(try await Cloud.freshPostgresDatabase() + "?pool_max_conns=2"))
        try await store.withRunning {
            try await store.migrate()
            try await Self.expectRefusal(.noStreetData, ["no street data loaded", "pacer-cloud streets load"]) {
                _ = try await store.streets.route(through: [LatLon(lat: 45.46, lon: 9.19), LatLon(lat: 45.47, lon: 9.2)])
            }
            #expect(try await store.streets.loaded() == nil)
        }
    }

    // MARK: Fixtures

    /// A fresh database on the tests' PostgreSQL with `file` loaded, and the store on it.
    static func withStreets(_ file: String, _ body: @Sendable (CloudStore) async throws -> Void) async throws {
        let url = try await Cloud.freshPostgresDatabase()
        _ = try await StreetLoader.load(DatabaseURL(url), file: file)
        let store = try await CloudStore.open(DatabaseURL(url + "?pool_max_conns=2"))
        try await store.withRunning {
            try await store.migrate()
            try await body(store)
        }
    }

    static func expectRefusal(_ kind: CalculatedRouteError.Kind, waypoint: Int? = nil, _ phrases: [String],
                              sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async throws {
        do {
            try await body()
            Issue.record("no refusal; expected \(kind)", sourceLocation: sourceLocation)
        } catch let error as CalculatedRouteError {
            #expect(error.kind == kind && error.waypoint == waypoint, "\(error.kind) at \(error.waypoint.map(String.init) ?? "-"): \(error.message)",
                    sourceLocation: sourceLocation)
            for phrase in phrases {
                #expect(error.message.contains(phrase), "'\(phrase)' not in: \(error.message)", sourceLocation: sourceLocation)
            }
        }
    }
}

/// A grid written by tools/osm-grid, with what it printed about itself.
struct Grid: Sendable {
    var name: String
    var file: String
    var rows: Int
    var columns: Int
    var spacing: Double
    var rowsLat: [Double]
    var columnsLon: [Double]
    var motorwayRow: Int?
    var noFootColumn: Int?

    static func make(in directory: TemporaryDirectory, name: String, _ arguments: [String]) async throws -> Grid {
        let file = directory.file(name + ".osm")
        let result = try await offPool {
            try BlockingCommand.run(DaemonFixture.repositoryRoot + "/tools/osm-grid", arguments + ["--out", file])
        }
        #expect(result.succeeded, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let lats = try #require(object["rows_lat"] as? [Double]), lons = try #require(object["columns_lon"] as? [Double])
        let info = try await offPool { try BlockingCommand.run("/usr/bin/osmium", ["fileinfo", "-e", file]) }
        #expect(info.succeeded && info.standardOutput.contains("Objects ordered (by type and id): yes"), "\(info)")
        return Grid(name: name, file: file, rows: lats.count, columns: lons.count, spacing: try #require(object["spacing_m"] as? Double),
                    rowsLat: lats, columnsLon: lons, motorwayRow: object["motorway_row"] as? Int, noFootColumn: object["no_foot_column"] as? Int)
    }

    /// The crossing of row `row` and column `column`, moved by a few metres if asked.
    func at(_ row: Int, _ column: Int, northM: Double = 0, eastM: Double = 0) -> LatLon {
        LatLon(lat: rowsLat[row] + northM / 111_132, lon: columnsLon[column] + eastM / (111_320 * cos(rowsLat[row] * .pi / 180)))
    }

    /// Whether runners may go along row `row` between two columns, or column `column` between two rows.
    func rowOpen(_ row: Int) -> Bool { row != motorwayRow }
    func columnOpen(_ column: Int) -> Bool { column != noFootColumn }

    /// The fewest blocks from one crossing to another over the open streets (breadth first).
    func blocks(from: (Int, Int), to: (Int, Int)) -> Int {
        var distance = [[Int]](repeating: [Int](repeating: -1, count: columns), count: rows)
        distance[from.0][from.1] = 0
        var queue = [from]
        while !queue.isEmpty {
            let (r, c) = queue.removeFirst()
            var next: [(Int, Int)] = []
            if rowOpen(r) { next += [(r, c - 1), (r, c + 1)] }
            if columnOpen(c) { next += [(r - 1, c), (r + 1, c)] }
            for (nr, nc) in next where (0..<rows).contains(nr) && (0..<columns).contains(nc) && distance[nr][nc] < 0 {
                distance[nr][nc] = distance[r][c] + 1
                queue.append((nr, nc))
            }
        }
        return distance[to.0][to.1]
    }

    /// The same point, to OSM's precision (1e-7 degrees).
    static func same(_ a: LatLon, _ b: LatLon) -> Bool { abs(a.lat - b.lat) < 1e-7 && abs(a.lon - b.lon) < 1e-7 }

    /// The row (or column) `point` lies on, if it does (within 1 cm).
    func row(of point: LatLon) -> Int? { rowsLat.firstIndex { abs($0 - point.lat) < 1e-7 } }
    func column(of point: LatLon) -> Int? { columnsLon.firstIndex { abs($0 - point.lon) < 1e-7 } }

    /// Every segment of the path runs along one open street of the grid, and the path is
    /// `blocks` blocks long (within a metre: osm2pgrouting measures on the ellipsoid).
    func check(_ route: CalculatedRoute, blocks: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(abs(route.lengthM - Double(blocks) * spacing) < 1, "\(route.lengthM) m, not \(blocks) blocks", sourceLocation: sourceLocation)
        #expect(abs(route.legLengthsM.reduce(0, +) - route.lengthM) < 1e-6, sourceLocation: sourceLocation)
        #expect(Grid.same(route.points[0], route.snapped[0]) && Grid.same(route.points[route.points.count - 1], route.snapped[route.snapped.count - 1]),
                sourceLocation: sourceLocation)
        var measured = 0.0
        for (a, b) in zip(route.points, route.points.dropFirst()) {
            measured += a.distanceM(to: b)
            if let row = row(of: a), row == self.row(of: b) {
                #expect(rowOpen(row), "runs along row \(row), the motorway: \(a) to \(b)", sourceLocation: sourceLocation)
            } else if let column = column(of: a), column == self.column(of: b) {
                #expect(columnOpen(column), "runs along column \(column), foot=no: \(a) to \(b)", sourceLocation: sourceLocation)
            } else {
                Issue.record("\(a) to \(b) is not along a street of the grid", sourceLocation: sourceLocation)
            }
        }
        // The points themselves, measured here, add up to the length the router gave.
        #expect(abs(measured - route.lengthM) < 1, "points measure \(measured) m, the route says \(route.lengthM) m", sourceLocation: sourceLocation)
    }
}
