import CloudModel
import Foundation
import SQLKit

/// Races' calculated routes: a path over streets from the start through each stage to the
/// arrival, for runners (no motorways, no ways closed to pedestrians), the shortest by length.
///
/// PostgreSQL only, over pgRouting and the streets `StreetLoader` loaded (osm2pgrouting's
/// tables, in schema `streets`). Each waypoint joins the streets at the nearer end of the street
/// nearest to it (at most `CalculatedRoute.maxSnapDistanceM` away); each leg is one
/// `pgr_dijkstra` over the streets in a box around it, its edges' geometries joined in order.
///
/// Bounded work: at most `CalculatedRoute.maxWaypoints` waypoints, a length limit checked on the
/// straight lines before any query and after each leg, each leg's graph cut to a box no larger
/// than the length left allows, and a statement timeout.
public struct StreetRouter: Sendable {
    public let database: StoreDatabase

    public init(database: StoreDatabase) {
        self.database = database
    }

    /// The schemas: the streets routed over, and PostGIS's and pgRouting's functions and types
    /// (when `StreetLoader` created the extensions; ones created elsewhere are found on `public`).
    public static let schema = "streets"
    public static let extensionSchema = "streets_gis"
    /// A leg's graph: the streets within its straight length, and at least this much, of the box
    /// around its two ends (never more than the route's length left lets a path stray), so that a
    /// leg of a big extract loads a neighbourhood's streets into pgr_dijkstra, not a country's.
    static let legMarginMinimumM = 1_000.0
    /// The longest any one query of a route may take.
    static let statementTimeout = "20s"

    /// The path from `waypoints[0]` through each in turn to the last, at most `maxLengthM` long.
    /// Throws `CalculatedRouteError` for what the request must change (naming the waypoint or
    /// the limit); other errors are the server's.
    public func route(through waypoints: [LatLon], maxLengthM: Double = CalculatedRoute.maxLengthM) async throws -> CalculatedRoute {
        guard database.dialect == .postgres else {
            throw CalculatedRouteError(.unavailable, "calculated routes need the PostgreSQL store with pgRouting (this server keeps its data in SQLite): draw the path or upload a GPX")
        }
        let count = waypoints.count
        guard (2...CalculatedRoute.maxWaypoints).contains(count) else {
            throw CalculatedRouteError(.waypointCount, "a calculated route goes from the start through up to \(CalculatedRoute.maxWaypoints - 2) stages to the arrival: 2 to \(CalculatedRoute.maxWaypoints) points, not \(count)")
        }
        for (index, point) in waypoints.enumerated() where !point.isValid {
            throw CalculatedRouteError(.invalidWaypoint, waypoint: index, "\(Self.name(index, count)) is not a position (latitude within ±90°, longitude within ±180°)")
        }
        let straight = zip(waypoints, waypoints.dropFirst()).reduce(0.0) { $0 + $1.0.distanceM(to: $1.1) }
        guard straight <= maxLengthM else {
            throw CalculatedRouteError(.tooLong, "even in straight lines from the start through each stage to the arrival the path is \(Self.km(straight)) km, over the limit of \(Self.km(maxLengthM)) km")
        }
        let outcome: Result<CalculatedRoute, CalculatedRouteError> = try await database.transaction { db in
            // SET LOCAL: only this transaction's; the store's own queries never see these tables.
            try await db.raw("SET LOCAL search_path TO \(ident: Self.schema), \(ident: Self.extensionSchema), public").run()
            try await db.raw("SET LOCAL statement_timeout = \(literal: Self.statementTimeout)").run()
            // Thrown inside, a CalculatedRouteError would come out wrapped in PostgresNIO's transaction error.
            do {
                return .success(try await Self.calculate(db, waypoints, maxLengthM: maxLengthM))
            } catch let error as CalculatedRouteError {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// What is loaded: nil when no streets are.
    public func loaded() async throws -> StreetData? {
        guard database.dialect == .postgres else { return nil }
        return try await database.read { db in try await Self.loaded(db, schema: Self.schema) }
    }

    static func loaded(_ db: any SQLDatabase, schema: String) async throws -> StreetData? {
        let table = schema + ".streets_loaded"
        guard try await db.raw("SELECT to_regclass(\(bind: schema + ".ways")) IS NOT NULL AND to_regclass(\(bind: table)) IS NOT NULL AS present")
            .first()?.decode(column: "present", as: Bool.self) == true else { return nil }
        guard let row = try await db.raw("""
            SELECT file, loaded_at_ms, streets, crossings FROM \(ident: schema).streets_loaded ORDER BY loaded_at_ms DESC LIMIT 1
            """).first() else { return nil }
        return StreetData(file: try row.decode(column: "file", as: String.self), loadedAtMs: try row.decode(column: "loaded_at_ms", as: Int64.self),
                          streets: try row.decode(column: "streets", as: Int.self), crossings: try row.decode(column: "crossings", as: Int.self))
    }

    // MARK: The calculation, inside the transaction

    private struct Snapped {
        var vertex: Int64
        var point: LatLon
    }

    private static func calculate(_ db: any SQLDatabase, _ waypoints: [LatLon], maxLengthM: Double) async throws -> CalculatedRoute {
        guard try await loaded(db, schema: schema) != nil else {
            throw CalculatedRouteError(.noStreetData, "no street data loaded on this server, so it cannot calculate routes (an operator loads an OpenStreetMap extract with 'pacer-cloud streets load'): draw the path or upload a GPX")
        }
        let count = waypoints.count
        var snapped: [Snapped] = []
        for (index, point) in waypoints.enumerated() {
            snapped.append(try await snap(db, point, name: name(index, count), index: index))
        }
        var points: [LatLon] = [snapped[0].point]
        var legs: [Double] = []
        var total = 0.0
        for leg in 1..<count {
            let (from, to) = (snapped[leg - 1], snapped[leg])
            let (path, length) = try await shortestPath(db, from: from, to: to, budgetM: maxLengthM - total,
                                                        names: (name(leg - 1, count), name(leg, count)), leg: leg)
            for point in path where point != points.last { points.append(point) }
            legs.append(length)
            total += length
            guard total <= maxLengthM else {
                throw CalculatedRouteError(.tooLong, waypoint: leg, "the calculated route is over the limit of \(km(maxLengthM)) km: \(km(total)) km by \(name(leg, count))")
            }
        }
        return CalculatedRoute(points: points, lengthM: total, legLengthsM: legs, snapped: snapped.map(\.point))
    }

    /// The nearer end of the street nearest to `point`. The nearest few by bounding box (the GiST
    /// index, in degrees), then the nearest of them on the ellipsoid.
    private static func snap(_ db: any SQLDatabase, _ point: LatLon, name: String, index: Int) async throws -> Snapped {
        guard let nearest = try await db.raw("""
            SELECT w.source, w.target, ST_Distance(w.the_geom::geography, p.g::geography) AS distance_m,
                   ST_LineLocatePoint(w.the_geom, p.g) AS fraction
            FROM (SELECT ST_SetSRID(ST_MakePoint(\(bind: point.lon), \(bind: point.lat)), 4326) AS g) AS p
            CROSS JOIN LATERAL (SELECT source, target, the_geom FROM ways ORDER BY the_geom <-> p.g LIMIT 8) AS w
            ORDER BY distance_m LIMIT 1
            """).first() else {
            throw CalculatedRouteError(.noStreetData, "no street data loaded on this server (its street table is empty): draw the path or upload a GPX")
        }
        let distance = try nearest.decode(column: "distance_m", as: Double.self)
        guard distance <= CalculatedRoute.maxSnapDistanceM else {
            throw CalculatedRouteError(.farFromStreets, waypoint: index, "\(name) is \(Int(distance.rounded())) m from the nearest street the server knows, more than \(Int(CalculatedRoute.maxSnapDistanceM)) m: move it onto a street, or draw the path")
        }
        let fraction = try nearest.decode(column: "fraction", as: Double.self)
        let vertex = try nearest.decode(column: fraction <= 0.5 ? "source" : "target", as: Int64.self)
        guard let row = try await db.raw("SELECT ST_Y(the_geom) AS lat, ST_X(the_geom) AS lon FROM ways_vertices_pgr WHERE id = \(bind: vertex)").first() else {
            throw StoreError("street crossing \(vertex) is missing from the street data: load the streets again")
        }
        return Snapped(vertex: vertex, point: LatLon(lat: try row.decode(column: "lat", as: Double.self), lon: try row.decode(column: "lon", as: Double.self)))
    }

    /// The shortest path over the streets from one snapped waypoint to the next: its points in
    /// order and its length. pgr_dijkstra's graph is the streets in a box around the two ends.
    private static func shortestPath(_ db: any SQLDatabase, from: Snapped, to: Snapped, budgetM: Double, names: (String, String), leg: Int)
        async throws -> (points: [LatLon], lengthM: Double) {
        guard from.vertex != to.vertex else { return ([to.point], 0) }
        let straight = from.point.distanceM(to: to.point)
        // A path of length L between two points strays at most (L - straight) / 2 from them.
        let margin = min(max(legMarginMinimumM, straight), max(0, budgetM - straight) / 2 + 50)
        let box = Box(from.point, to.point, marginM: margin)
        let edges = "SELECT gid AS id, source, target, length_m AS cost FROM ways WHERE the_geom && ST_MakeEnvelope(\(box.sql), 4326)"
        let rows = try await db.raw("""
            SELECT d.seq, d.cost, pt.path[1] AS i, ST_Y(pt.geom) AS lat, ST_X(pt.geom) AS lon
            FROM pgr_dijkstra(\(bind: edges), \(bind: from.vertex), \(bind: to.vertex), directed => false) AS d
            JOIN ways AS w ON w.gid = d.edge
            CROSS JOIN LATERAL ST_DumpPoints(CASE WHEN w.source = d.node THEN w.the_geom ELSE ST_Reverse(w.the_geom) END) AS pt
            ORDER BY d.seq, pt.path[1]
            """).all()
        guard !rows.isEmpty else {
            throw CalculatedRouteError(.unconnected, waypoint: leg, "no street path joins \(names.0) to \(names.1) within \(km(margin)) km of them (the streets loaded do not connect them): move \(names.1), or draw the path")
        }
        var points: [LatLon] = []
        var length = 0.0
        var lastSeq = -1
        for row in rows {
            let seq = try row.decode(column: "seq", as: Int.self)
            if seq != lastSeq {
                length += try row.decode(column: "cost", as: Double.self)
                lastSeq = seq
            }
            let point = LatLon(lat: try row.decode(column: "lat", as: Double.self), lon: try row.decode(column: "lon", as: Double.self))
            if point != points.last { points.append(point) }
        }
        return (points, length)
    }

    /// Two points' bounding box grown by a margin, as ST_MakeEnvelope's arguments.
    private struct Box {
        var sql: String

        init(_ a: LatLon, _ b: LatLon, marginM: Double) {
            let dLat = marginM / 111_000
            let dLon = marginM / (111_000 * max(0.01, cos(max(abs(a.lat), abs(b.lat)) * .pi / 180)))
            let values = [min(a.lon, b.lon) - dLon, min(a.lat, b.lat) - dLat, max(a.lon, b.lon) + dLon, max(a.lat, b.lat) + dLat]
            sql = values.map { String(format: "%.7f", $0) }.joined(separator: ", ")
        }
    }

    static func name(_ index: Int, _ count: Int) -> String { CalculatedRoute.waypointName(index, of: count) }

    static func km(_ metres: Double) -> String { String(format: "%.1f", metres / 1000) }
}

/// The streets a server has loaded (`StreetLoader`).
public struct StreetData: Sendable, Equatable {
    /// The extract's file name, as given to the loader.
    public var file: String
    public var loadedAtMs: Int64
    /// Street segments (between crossings) and crossings (street ends included) in the graph.
    public var streets: Int
    public var crossings: Int
}

extension CloudStore {
    /// Calculated routes over the loaded streets (PostgreSQL only).
    public var streets: StreetRouter { StreetRouter(database: database) }
}
