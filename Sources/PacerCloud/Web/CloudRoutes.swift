import CloudModel
import CloudStore
import Hummingbird
import PacerContract
import ServiceLifecycle

/// Builds pacer-cloud's router: `/health` and `/a/{secret}` open, everything under `/v1`
/// behind a device's bearer token, the account pages behind a session. It holds what the
/// routes share (the store, the configuration, the limiters, the hub, the counters) and builds
/// one controller per feature (`Web/<Feature>/`) from them, each given only what it uses. Every
/// route is added with its `AccessPolicy`, recorded in `accessRegistry` for the access harness.
public struct CloudRoutes: Sendable {
    let store: CloudStore
    let configuration: CloudConfiguration
    /// "https://cloud.example.org": what alert page links start with (`CloudConfiguration.linkBase`).
    let linkBase: String
    /// Called after a new alert message queued forwards, so they go out now, not at the next poll.
    let wakeForwarder: @Sendable () -> Void
    /// One per limit, shared by every request this router serves.
    let alertPageLimiter: RateLimiter?
    /// Share links' pages, per address, at the alert page's rate: both are secrets in a URL.
    let sharePageLimiter: RateLimiter?
    let uploadAddressLimiter: RateLimiter?
    let uploadDeviceLimiter: RateLimiter?
    /// Log-in by account id: a bucket in use is never evicted by other keys (`limitAttempts`).
    let loginAccountLimiter: RateLimiter?
    /// Log-in by the address typed when it has no account: evictable, its keys are made up.
    let loginNoAccountLimiter: RateLimiter?
    let loginAddressLimiter: RateLimiter?
    let linkAddressLimiter: RateLimiter?
    /// Milliseconds since 1970: what sessions and e-mailed links expire by.
    let wallClock: @Sendable () -> Int64
    /// Tells dashboards (of every instance) what changed.
    let hub: any EventHub
    /// Dashboard streams open per account on this instance.
    let streams = StreamCounter()
    /// Alert messages per device and alert (issue 31), never refusing a real SOS.
    let alertAdmission: AlertAdmission
    /// Imports' reading and run views' computing, off the request path (`WorkQueue`).
    let heavyWork = WorkQueue()
    /// Long-polls open per device and event streams per session on this instance (ConnectionLimits).
    let holds = HoldCounter()
    /// The run page's script files.
    let assets: Assets
    /// Each route's policy, filled by `router()`.
    public let accessRegistry = AccessRegistry()
    /// Races' frames for spectators, and the batches their devices' positions are written in (#34).
    let raceFrames: RaceFrames
    let raceWriter: RacePositionWriter
    /// Courses over streets; nil on a store without street data.
    let routeCalculator: RouteCalculator?

    public init(store: CloudStore, configuration: CloudConfiguration, linkBase: String,
                now: @escaping @Sendable () -> Duration = RateLimiter.monotonicNow, wallClock: @escaping @Sendable () -> Int64 = SessionSettings.systemClock,
                wakeForwarder: @escaping @Sendable () -> Void = {}, hub: any EventHub = LocalEventHub()) {
        self.hub = hub
        self.wallClock = wallClock
        self.store = store
        self.configuration = configuration
        self.linkBase = linkBase
        self.wakeForwarder = wakeForwarder
        assets = Assets(directory: configuration.map.assetsDirectory)
        let limits = configuration.rateLimits
        alertPageLimiter = limits.alertPagePerAddress.map { RateLimiter($0, now: now) }
        sharePageLimiter = limits.alertPagePerAddress.map { RateLimiter($0, now: now) }
        uploadAddressLimiter = limits.uploadPerAddress.map { RateLimiter($0, now: now) }
        uploadDeviceLimiter = limits.uploadPerDevice.map { RateLimiter($0, now: now) }
        loginAccountLimiter = limits.loginPerAccount.map { RateLimiter($0, evictsInUse: false, now: now) }
        loginNoAccountLimiter = limits.loginPerAccount.map { RateLimiter($0, now: now) }
        loginAddressLimiter = limits.loginPerAddress.map { RateLimiter($0, now: now) }
        linkAddressLimiter = limits.linkPerAddress.map { RateLimiter($0, now: now) }
        alertAdmission = AlertAdmission(now: now)
        raceFrames = RaceFrames(races: store.races, hub: hub, period: configuration.races.framePeriod, wallClock: wallClock)
        raceWriter = RacePositionWriter(races: store.races, delay: configuration.races.writeDelay)
        // Over streets on PostgreSQL (pgRouting; the route says so when no street data is loaded).
        routeCalculator = store.database.dialect == .postgres ? StreetRoutes(streets: store.streets) : nil
    }

    /// What runs beside the router: the races' frame maker.
    var services: [any Service] { [raceFrames] }

    /// Runs without figures counted per page view at most (`RunAnalysis`).
    static let figuresPerRequest = RunAnalysis.figuresPerRequest

    /// A lowercase UUID, as the cloud makes ids (`WireLimits.isLowercaseUUID`).
    static func isLowercaseUUID(_ text: String) -> Bool { WireLimits.isLowercaseUUID(text) }

    public func router() -> Router<CloudRequestContext> {
        let router = Router(context: CloudRequestContext.self)
        // Outermost, so it counts the statuses ErrorMiddleware's refusals become.
        router.add(middleware: RequestMetricsMiddleware(metrics: configuration.metrics, settings: configuration.metricsAccess))
        // Outside the error middleware, so error pages are compressed too.
        router.add(middleware: CompressionMiddleware())
        router.add(middleware: ErrorMiddleware(routes: accessRegistry, sessions: sessions))
        let controllers = Controllers(self)

        // Outside the session middleware: files the same for everyone need no session lookup.
        controllers.health.addRoutes(to: PolicedRoutes(group: router.group(), prefix: "", registry: accessRegistry))

        let clientAddress = RateLimitMiddleware.Key.clientAddress(trustedProxies: configuration.trustedProxies)
        let pages = router.group("a")
        if let alertPageLimiter {
            pages.add(middleware: RateLimitMiddleware(limiter: alertPageLimiter, key: clientAddress, what: "alert page lookups",
                                                      applies: { _ in true }, html: true))
        }
        controllers.alertPage.addRoutes(to: PolicedRoutes(group: pages, prefix: "/a", registry: accessRegistry))
        let sharedRuns = router.group("s")
        if let sharePageLimiter {
            sharedRuns.add(middleware: RateLimitMiddleware(limiter: sharePageLimiter, key: clientAddress, what: "share link lookups",
                                                           applies: { _ in true }, html: true))
        }
        controllers.runManagement.addSharedRoutes(to: PolicedRoutes(group: sharedRuns, prefix: "/s", registry: accessRegistry))

        // A group of its own: no bearer token yet, the link code is the credential.
        let linking = router.group("v1")
        if let linkAddressLimiter {
            linking.add(middleware: RateLimitMiddleware(limiter: linkAddressLimiter, key: clientAddress, what: "link attempts", applies: { _ in true }))
        }

        // Uploads are every PUT; alerts (POST) and reads are never limited here.
        let isUpload: @Sendable (Request) -> Bool = { $0.method == .put }
        let v1 = router.group("v1")
        if let uploadAddressLimiter {
            v1.add(middleware: RateLimitMiddleware(limiter: uploadAddressLimiter, key: clientAddress, what: "uploads", applies: isUpload))
        }
        v1.add(middleware: DeviceAuthenticator(store: store, wallClock: wallClock))
        if let uploadDeviceLimiter {
            v1.add(middleware: RateLimitMiddleware(limiter: uploadDeviceLimiter, key: .device, what: "uploads", applies: isUpload))
        }
        let device = PolicedRoutes(group: v1, prefix: "/v1", registry: accessRegistry)
        controllers.deviceLink.addRoutes(linking: PolicedRoutes(group: linking, prefix: "/v1", registry: accessRegistry), device: device)
        controllers.deviceRuns.addRoutes(to: device)
        controllers.position.addRoutes(to: device)
        controllers.deviceAlerts.addRoutes(to: device)
        controllers.deviceSync.addRoutes(to: device)
        controllers.deviceRaces.addRoutes(to: device)

        let web = router.group()
        web.add(middleware: SessionMiddleware(sessions: sessions))
        let webRoutes = PolicedRoutes(group: web, prefix: "", registry: accessRegistry)
        controllers.accounts.addRoutes(to: webRoutes)
        controllers.devices.addRoutes(to: webRoutes)
        controllers.runs.addRoutes(to: webRoutes)
        controllers.runManagement.addRoutes(to: webRoutes)
        controllers.calendar.addRoutes(to: webRoutes)
        controllers.shoes.addRoutes(to: webRoutes)
        controllers.accountExport.addRoutes(to: webRoutes)
        controllers.importing.addRoutes(to: webRoutes)
        controllers.statistics.addRoutes(to: webRoutes)
        controllers.heart.addRoutes(to: webRoutes)
        controllers.plan.addRoutes(to: webRoutes)
        controllers.races.addRoutes(to: webRoutes)
        controllers.raceOrganisers.addRoutes(to: webRoutes)
        controllers.monitoring.addRoutes(web: webRoutes, device: device)
        return router
    }

    var sessions: Sessions {
        Sessions(accounts: store.accounts, settings: configuration.sessions, secureCookies: linkBase.lowercased().hasPrefix("https:"), nowMs: wallClock)
    }
}

/// One controller per feature, each given only what it uses of `CloudRoutes`' dependencies.
private struct Controllers {
    let health: HealthController
    let alertPage: AlertPageController
    let deviceLink: DeviceLinkController
    let deviceRuns: DeviceRunsController
    let position: PositionController
    let deviceAlerts: DeviceAlertsController
    let deviceSync: DeviceSyncController
    let accounts: AccountsController
    let devices: DevicesController
    let runs: RunsController
    let runManagement: RunManagementController
    let calendar: CalendarController
    let shoes: ShoesController
    let accountExport: AccountExportController
    let importing: ImportController
    let statistics: StatisticsController
    let heart: HeartController
    let plan: PlanController
    let races: RacesController
    let raceOrganisers: RaceOrganiserController
    let deviceRaces: DeviceRacesController
    let monitoring: MonitoringController

    init(_ routes: CloudRoutes) {
        let store = routes.store, configuration = routes.configuration, wallClock = routes.wallClock
        let heartbeats = Heartbeats(sync: store.sync)
        let analysis = RunAnalysis(runs: store.runs, health: store.health, heavyWork: routes.heavyWork)
        let following = PlanFollowing(runs: store.runs, accounts: store.accounts, plans: store.plans, wallClock: wallClock)
        health = HealthController(assets: routes.assets)
        alertPage = AlertPageController(alerts: store.alerts, monitoring: store.monitoring, devices: store.devices, accounts: store.accounts,
                                        map: configuration.map)
        deviceLink = DeviceLinkController(devices: store.devices, accounts: store.accounts, wallClock: wallClock)
        deviceRuns = DeviceRunsController(runs: store.runs, analysis: analysis, following: following)
        position = PositionController(alerts: store.alerts, monitoring: store.monitoring, heartbeats: heartbeats, hub: routes.hub,
                                      trailKept: configuration.monitoring.trailKept)
        deviceAlerts = DeviceAlertsController(alerts: store.alerts, accounts: store.accounts, monitoring: store.monitoring, heartbeats: heartbeats,
                                              admission: routes.alertAdmission, linkBase: routes.linkBase, mail: configuration.mail,
                                              wakeForwarder: routes.wakeForwarder, hub: routes.hub)
        deviceSync = DeviceSyncController(sync: store.sync, accounts: store.accounts, plans: store.plans, races: store.races, health: store.health,
                                          alerts: store.alerts,
                                          monitoring: store.monitoring, heartbeats: heartbeats, hub: routes.hub, wallClock: wallClock)
        accounts = AccountsController(store: store, sessions: routes.sessions, settings: configuration.sessions, passwordCost: configuration.passwordCost,
                                      mail: configuration.mail, linkBase: routes.linkBase, trustedProxies: configuration.trustedProxies,
                                      loginAccountLimiter: routes.loginAccountLimiter, loginNoAccountLimiter: routes.loginNoAccountLimiter,
                                      loginAddressLimiter: routes.loginAddressLimiter, wallClock: wallClock, wakeForwarder: routes.wakeForwarder)
        devices = DevicesController(devices: store.devices, linkBase: routes.linkBase, wallClock: wallClock)
        runManagement = RunManagementController(runs: store.runs, shoes: store.shoes, analysis: analysis, map: configuration.map, linkBase: routes.linkBase)
        runs = RunsController(runs: store.runs, devices: store.devices, shoes: store.shoes, heartbeats: heartbeats, analysis: analysis,
                              following: following, map: configuration.map, management: runManagement)
        calendar = CalendarController(runs: store.runs, analysis: analysis, wallClock: wallClock)
        shoes = ShoesController(shoes: store.shoes, wallClock: wallClock)
        accountExport = AccountExportController(store: store, wallClock: wallClock)
        importing = ImportController(runs: store.runs, devices: store.devices, analysis: analysis, heavyWork: routes.heavyWork, wallClock: wallClock)
        statistics = StatisticsController(health: store.health, plans: store.plans, analysis: analysis, wallClock: wallClock)
        heart = HeartController(health: store.health, devices: store.devices, heartbeats: heartbeats, analysis: analysis, wallClock: wallClock)
        plan = PlanController(plans: store.plans, wallClock: wallClock)
        let raceAccess = RaceAccessCheck(races: store.races)
        races = RacesController(races: store.races, access: raceAccess, frames: routes.raceFrames, heavyWork: routes.heavyWork, map: configuration.map,
                                settings: configuration.races, linkBase: routes.linkBase, wallClock: wallClock, routeCalculator: routes.routeCalculator)
        raceOrganisers = RaceOrganiserController(races: store.races, accounts: store.accounts, devices: store.devices, sync: store.sync,
                                                 outbox: store.outbox, access: raceAccess, frames: routes.raceFrames, mail: configuration.mail, linkBase: routes.linkBase,
                                                 wallClock: wallClock, wakeForwarder: routes.wakeForwarder)
        deviceRaces = DeviceRacesController(lookups: RaceLookups(races: store.races, ttl: configuration.races.lookupTTL), writer: routes.raceWriter, frames: routes.raceFrames, settings: configuration.races,
                                            wallClock: wallClock)
        monitoring = MonitoringController(
            monitoring: store.monitoring, accounts: store.accounts, devices: store.devices, alerts: store.alerts,
            cards: Dashboard.Repositories(monitoring: store.monitoring, devices: store.devices, alerts: store.alerts, sync: store.sync),
            hub: routes.hub, streams: routes.streams, holds: routes.holds, connections: configuration.connections, sessions: routes.sessions,
            monitorSettings: configuration.monitoring, mail: configuration.mail, linkBase: routes.linkBase, map: configuration.map,
            wallClock: wallClock, wakeForwarder: routes.wakeForwarder)
    }
}
