import CloudSync
import PacerConfig
import PacerSession
import ServiceLifecycle
import SOS

#if canImport(Glibc)
import Glibc
#endif

/// Keeps the SOS lane's thread for the daemon's lifetime and stops it last-thing on shutdown
/// (whatever is still owed stays in sos.db for the next start).
struct SOSService: Service {
    let lane: SOSLane

    func run() async throws {
        try? await gracefulShutdown()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            lane.put(.shutdown(done: { done.resume() }))
        }
    }
}

extension LaneSettings {
    /// `[sos]` and `[upload]` as the lane takes them.
    /// Alerts go to the cloud `CloudCredentials.resolve` picks, as uploads do.
    init(_ configuration: PacerConfiguration, link: CloudLink? = nil) {
        let sos = configuration.sos
        let cloud = CloudCredentials.resolve(upload: configuration.upload, link: link)
        self.init(rules: sos.rules,
                  contacts: sos.sms ? sos.contacts : [],
                  alertsURL: sos.https ? cloud.url.map { $0 + "/v1/alerts" } : nil,
                  hook: sos.hook,
                  call: sos.call,
                  mapLink: sos.mapLink,
                  deviceName: sos.deviceName ?? Self.hostName(),
                  attemptTimeoutSeconds: sos.attemptTimeoutSeconds,
                  retryMaxSeconds: sos.retryMaxSeconds,
                  buttons: RunSession.gestures(configuration),
                  wearerName: configuration.wearerName,
                  wearerZone: ZoneFile.wearer(named: configuration.timeZone))
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "pacer" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Where the SOS lane keeps its alerts: `sos.db` beside the run store.
func sosDatabasePath(_ configuration: PacerConfiguration) -> String {
    let path = configuration.databasePath
    guard let slash = path.lastIndex(of: "/") else { return "sos.db" }
    return String(path[...slash]) + "sos.db"
}
