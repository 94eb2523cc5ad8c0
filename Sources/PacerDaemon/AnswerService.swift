import CloudSync
import PacerConfig
import PacerContract
import PacerCore
import PacerSession
import ServiceLifecycle
import SOS
import Speech
import Synchronization
import Threads
import Uplink

/// Keeps the answers channel (monitors' answers to alerts, issue 22) for the daemon's lifetime.
struct AnswerService: Service {
    let answers: AnswerChannel

    func run() async throws {
        try? await gracefulShutdown()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            answers.shutdown(done: { done.resume() })
        }
    }

    /// Starts the channel: the cloud from `cloud` (read before every poll), open alerts from the
    /// SOS lane, the position from `newest`, answers said by `speaker` at SOS priority.
    static func start(_ answers: AnswerChannel, configuration: PacerConfiguration, cloud: CloudAccess, sos: SOSLane, newest: NewestPosition,
                      speaker: Speaker?, log: DaemonLog) throws(ThreadStartError) {
        try answers.start(
            storePath: configuration.databasePath, settings: { cloud.answerSettings }, openAlerts: { sos.health.openAlerts },
            position: { newest.position },
            say: { text in
                guard let speaker else {
                    log(.notice, "answers", "answer (no voice to say it): \(text)")
                    return
                }
                speaker.say(Cue(time: Timestamp(milliseconds: WallClock.milliseconds()), kind: .sosAnswer, text: text))
            },
            log: { level, message in log(CloudSyncService.priority(level), "answers", message) })
    }
}

/// The newest usable fix, as the pipeline hands it to the SOS lane (also outside a run), for
/// "where are you?".
final class NewestPosition: Sendable {
    private let newest = Mutex<(LivePosition, Coordinate)?>(nil)

    /// The lane's input, if it is a position: its monotonic time made wall time again.
    func observe(_ input: LaneInput) {
        guard case .position(let position, let offset) = input else { return }
        let wallMs = position.time.milliseconds + (offset ?? WallClock.milliseconds() - Int64(MonotonicTime.nanoseconds() / 1_000_000))
        let live = LivePosition(time: Timestamp(milliseconds: wallMs), latitude: position.latitude, longitude: position.longitude,
                                accuracyMeters: position.accuracyMeters, speed: nil, heartRate: nil, runUUID: nil)
        newest.withLock { $0 = (live, Coordinate(latitude: position.latitude, longitude: position.longitude)) }
    }

    var position: (LivePosition, Coordinate)? { newest.withLock { $0 } }
}

extension AnswerSettings {
    /// The uplink's cloud and credentials (one cloud, one way in) and its privacy zones; no
    /// cloud with `[upload] sync = false` (a server that only takes uploads and alerts).
    init(_ configuration: PacerConfiguration, link: CloudLink? = nil) {
        let uplink = UplinkSettings(configuration, link: link)
        self.init(url: configuration.upload.sync ? uplink.url : nil, token: uplink.token, client: uplink.client,
                  privacyZones: configuration.upload.privacyZones)
    }
}
