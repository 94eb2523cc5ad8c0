import CloudSync
import HTTPClient
import PacerConfig
import ServiceLifecycle
import SOS
import Systemd
import Uplink

/// Keeps the uplink's thread for the daemon's lifetime; stops it on shutdown (what is not sent
/// stays in the outbox for the next start).
struct UplinkService: Service {
    let uplink: Uplink

    func run() async throws {
        try? await gracefulShutdown()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            uplink.put(.shutdown(done: { done.resume() }))
        }
    }
}

extension UplinkSettings {
    /// The URL and token from `CloudCredentials.resolve` (`[upload] token` wins over the link).
    init(_ configuration: PacerConfiguration, link: CloudLink? = nil) {
        let upload = configuration.upload
        let credentials = CloudCredentials.resolve(upload: upload, link: link)
        self.init(url: credentials.url, token: credentials.token,
                  client: HTTPClient.Configuration(caFile: upload.caFile, clientCertificate: upload.clientCertificate,
                                                   clientKey: upload.clientKey, userAgent: "pacerd"),
                  privacyZones: upload.privacyZones, livePositionEverySeconds: upload.livePositionEverySeconds)
    }
}

/// The network coming back wakes the uplink at once: NetworkManager's StateChanged to a
/// connected state, or systemd-networkd's OperationalState turning routable. Without either on
/// the system bus, the backoff alone paces retries.
struct NetworkWatchService: Service {
    let uplink: Uplink
    let sos: SOSLane
    let cloudSync: CloudSync
    let answers: AnswerChannel
    let log: DaemonLog

    /// Alerts owed first: the SOS lane retries at once, beside the uplink.
    private func wake(_ reason: String) {
        sos.put(.retryNow(reason: reason))
        uplink.put(.wake(reason: reason))
        cloudSync.put(.wake(reason: reason))
        answers.wake()
    }

    static let networkManagerConnected: Set<UInt32> = [60, 70]  // NM_STATE_CONNECTED_SITE, _GLOBAL

    func run() async throws {
        let bus: BusConnection
        do {
            bus = try BusConnection.system()
        } catch {
            log(.info, "upload", "no system bus (\(error)): network changes are not watched; retries follow the backoff")
            return
        }
        defer { bus.close() }
        let signals: AsyncStream<BusSignal>
        do {
            signals = try await bus.signals(matching: [
                BusMatchRule(sender: "org.freedesktop.NetworkManager", interface: "org.freedesktop.NetworkManager", member: "StateChanged"),
                BusMatchRule(sender: "org.freedesktop.network1", path: "/org/freedesktop/network1",
                             interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"),
            ])
        } catch {
            log(.info, "upload", "cannot watch network changes (\(error)); retries follow the backoff")
            return
        }
        for await signal in signals.cancelOnGracefulShutdown() {
            if signal.member == "StateChanged", case .uint32(let state)? = signal.arguments.first?.unwrapped,
               Self.networkManagerConnected.contains(state) {
                wake("NetworkManager says the network is connected")
            } else if let change = PropertiesChange(signal), case .string(let state)? = change.changed["OperationalState"]?.unwrapped,
                      state == "routable" || state == "degraded" {
                wake("systemd-networkd says the network is \(state)")
            }
        }
    }
}
