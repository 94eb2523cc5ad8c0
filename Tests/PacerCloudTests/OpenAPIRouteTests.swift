@testable import CloudStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// #31: every route of the router is in Sources/PacerCloud/openapi.yaml (so tools/fuzz-api
/// reaches it), with the security its access policy has, its forms requiring `csrf`; checked by
/// `tools/check-contract --routes` against the router itself, so a route added without its spec
/// fails here. And the 405's `Allow`, read from the access registry, knows every route's method.
@Suite(.timeLimit(.minutes(10))) struct OpenAPIRouteTests {
    static let spec = DaemonFixture.repositoryRoot + "/Sources/PacerCloud/openapi.yaml"
    static let checker = DaemonFixture.repositoryRoot + "/tools/check-contract"

    static func withRouter<T>(_ body: (Router<CloudRequestContext>, CloudRoutes) throws -> T) async throws -> T {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-openapi")
        let routes = CloudRoutes(store: try await CloudStore.open(.sqlite(path: directory.file("cloud.db"))), configuration: WebConfig.make(),
                                 linkBase: "http://127.0.0.1:8080")
        return try body(routes.router(), routes)
    }

    /// Runs the checker on the router's routes (each with its policy's rule, "none" without one).
    static func check(_ router: Router<CloudRequestContext>, _ routes: CloudRoutes) throws -> DaemonFixture.CtlResult {
        let rules = routes.accessRegistry.all
        var table: [String: String] = [:]
        for route in router.routes {
            let key = AccessRegistry.key(method: route.method, path: "\(route.path)")
            table[key] = rules[key] ?? "none"
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pacer-routes-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json")
        try JSONSerialization.data(withJSONObject: table, options: [.sortedKeys]).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try DaemonFixture.runBlocking("/usr/bin/env", ["python3", checker, "--routes", spec, file.path])
    }

    @Test("every route is an operation of openapi.yaml with its policy's security, and every operation a route")
    func everyRouteIsInTheSpec() async throws {
        try await Self.withRouter { router, routes in
            let result = try Self.check(router, routes)
            #expect(result.status == 0, "tools/check-contract --routes: \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("\(router.routes.count) routes") && result.stderr.contains(" 0 problem(s)"), "\(result.stderr)")
        }
    }

    @Test("a route added without its operation in the spec fails the check")
    func aMissingRouteFails() async throws {
        try await Self.withRouter { router, routes in
            router.get("account/everything") { _, _ in "everything" }
            let result = try Self.check(router, routes)
            #expect(result.status == 1)
            #expect(result.stdout.contains("GET /account/everything: a route of the router that openapi.yaml leaves out"), "\(result.stdout)")
        }
    }

    @Test("the 405's Allow takes every method the router has, on every route, and only those")
    func allowKnowsEveryRoute() async throws {
        try await Self.withRouter { router, routes in
            var expected: [String: Set<String>] = [:]
            for route in router.routes {
                // A concrete path: each parameter one segment.
                expected["\(route.path)".replacing(/\{[^}]+\}/, with: "x"), default: []].insert(route.method.rawValue)
            }
            for (path, methods) in expected {
                #expect(routes.accessRegistry.methods(for: path) == methods.sorted(), "\(path)")
            }
            #expect(routes.accessRegistry.methods(for: "/v1/nothing") == nil)
            #expect(routes.accessRegistry.methods(for: "/runs/x/y/z/w") == nil)
            // A route added to the router through the registry is in the next answer.
            PolicedRoutes(group: router.group(), prefix: "", registry: routes.accessRegistry)
                .on(.delete, "account/everything", SignedInAccess()) { _, _ in "gone" }
            #expect(routes.accessRegistry.methods(for: "/account/everything") == ["DELETE"])
        }
    }
}

/// #31: the plan form's numbers, shown again on a refusal, are read without unchecked
/// arithmetic: a repeat's block of Int.min made the form's row indentation count down past
/// Int.min, a trap (the process died on one signed-in post).
@Suite(.timeLimit(.minutes(10))) struct PlanFormShownAgainTests {
    @Test("a refused form with any block count is shown again, never a trap",
          arguments: ["-9223372036854775808", "9223372036854775807", "-1", "0", "99999999999999999999"])
    func anyBlockCountIsShownAgain(block: String) throws {
        let form = PlanForm(fields: try WebForm.parse("name=x&date=2026-05-10&step1_type=repeat&step1_times=2&step1_block=\(block)"
                                                      + "&step2_type=run&step2_end=lap&step2_target=none").get())
        #expect(throws: PlanForm.Refusal.self) { try form.session(id: "s", accountID: "a") }
        let rows = try #require(form.values["rows"] as? [[String: Any]])
        // The repeat's row, the run and four blank rows; a negative or absurd block indents nothing past the rows shown.
        #expect(rows.count == 2 + PlanForm.blankRows)
        let inner = rows.map { $0["inner"] as? Bool ?? false }
        #expect(inner[0] == false)
        #expect(inner[1] == ((Int(block) ?? 0) > 0))
    }

    @Test("posting it signed in is a 400 naming step1_block, and the server goes on", arguments: Backend.allCases)
    func postedSignedIn(backend: Backend) async throws {
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: WebConfig.make(), wallClock: clock.now) { cloud in
            let browser = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, browser)
            let fields = ["name": "Intervals", "date": "2026-05-10", "step1_type": "repeat", "step1_times": "6",
                          "step1_block": "-9223372036854775808", "step2_type": "run", "step2_end": "distance", "step2_amount": "400 m",
                          "step2_target": "none"]
            let refused = try await browser.post("/plan/sessions", fields, formPage: "/plan/new")
            #expect(refused.status == .badRequest)
            #expect(refused.text.contains("step1_block"), "\(refused.text.prefix(2000))")
            #expect(try await browser.get("/plan").status == .ok)
        }
    }
}

/// #31: the pages' query parameters mean what openapi.yaml says (a page number as the links
/// write it, dates and months in digits), so the fuzzer's "not a page number" is refused: `Int()`
/// alone took "+5", "05" and "+123-05".
@Suite(.timeLimit(.minutes(10))) struct PageQueryTests {
    @Test("a page, a date or a month with a sign or a leading zero too many is 400 naming it; the ordinary ones are read",
          arguments: Backend.allCases)
    func signsAndPaddingAreRefused(backend: Backend) async throws {
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: WebConfig.make(), wallClock: clock.now) { cloud in
            let browser = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, browser)
            // Named in the words of the page (issue 33), not by the query's field name.
            for (uri, field) in [("/runs?page=%2B5", "Page"), ("/runs?page=05", "Page"), ("/runs?from=%2B001-05-10", "From"),
                                 ("/runs?to=%2B001-05-10", "To"), ("/plan?month=%2B123-05", "Month"), ("/plan?month=2026-%2B5", "Month")] {
                let page = try await browser.get(uri)
                #expect(page.status == .badRequest, "\(uri): \(page.status)")
                #expect(page.text.contains("\(field): "), "\(uri)")
            }
            for uri in ["/runs?page=1", "/runs?page=100000", "/runs?from=2026-05-01&to=2026-05-31", "/runs?from=&to=", "/plan?month=0001-01",
                        "/plan?month=9999-12"] {
                #expect(try await browser.get(uri).status == .ok, "\(uri)")
            }
        }
    }
}

/// #31: the pages' number formatting never traps: `Int()` of NaN, an infinity or 1e300 did
/// (a duration, a pace, a plan step's pace shown as minutes).
@Suite(.timeLimit(.minutes(10))) struct PageNumberFormatTests {
    @Test(arguments: [Double.nan, .infinity, -.infinity, 1e300, -1e300, 9.3e18])
    func figuresNoRunHasAreShownAsNone(value: Double) {
        #expect(RunnerFormat.duration(value) == "–")
        #expect(PlanForm.minutes(value) == "–")
        #expect(RunnerFormat.pace(value) == "–")
    }

    @Test func ordinaryFiguresAreUnchanged() {
        #expect(RunnerFormat.duration(2_525) == "42:05")
        #expect(RunnerFormat.duration(11_560) == "3:12:40")
        #expect(RunnerFormat.pace(312) == "5:12 /km")
        #expect(PlanForm.minutes(190) == "3:10")
    }
}
