import CloudSync
import PacerConfig
import ServiceLifecycle
import SOS
import Uplink
import Systemd
import Threads
import UnixSignals

/// SIGHUP (`systemctl reload pacerd`): the config file is read again and, if valid, handed to
/// the pipeline. An invalid file changes nothing; the journal says why (file:line: key: problem).
struct ReloadService: Service {
    let signals: UnixSignalsSequence
    let configPath: String?
    let pipeline: PipelineThread
    let strapSettings: StrapSettings
    let sos: SOSLane
    let uplink: Uplink
    let cloudSync: CloudSync
    let notifier: ServiceNotifier
    let log: DaemonLog
    /// What was loaded at start: settings that only apply at start are compared with it.
    let startConfiguration: PacerConfiguration
    let cloud: CloudAccess

    func run() async throws {
        for await _ in signals.cancelOnGracefulShutdown() {
            notifier.send(.reloading(monotonicMicroseconds: MonotonicTime.microseconds()))
            do {
                let configuration = try PacerConfiguration.load(path: configPath)
                pipeline.queue.put(.reload(configuration))
                cloud.reloaded(configuration)
                sos.put(.reload(cloud.laneSettings))
                uplink.put(.reload(cloud.uplinkSettings))
                cloudSync.put(.reload(cloud.syncSettings))
                strapSettings.reload(configuration)
                for name in Self.restartOnly(startConfiguration, configuration) {
                    log(.warning, "config", "\(name) changed; it takes effect when pacerd restarts")
                }
            } catch {
                log(.error, "config", "reload refused, keeping the running configuration: \(error)")
            }
            notifier.send(.ready)
        }
    }

    static func restartOnly(_ old: PacerConfiguration, _ new: PacerConfiguration) -> [String] {
        var names: [String] = []
        if old.gpsHost != new.gpsHost || old.gpsPort != new.gpsPort { names.append("[gps] host/port") }
        if old.databasePath != new.databasePath { names.append("[storage] path") }
        if old.controlSocket != new.controlSocket || old.controlGroup != new.controlGroup { names.append("[control] socket/group") }
        if old.buttonDevice != new.buttonDevice || old.buttonKeyCodes != new.buttonKeyCodes { names.append("[buttons] device/keys") }
        if old.memoryTrim != new.memoryTrim { names.append("[memory] trim") }
        return names
    }
}
