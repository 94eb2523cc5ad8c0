import CloudSync
import PacerConfig
import PacerContract
import PacerCore
import PacerSession
import ServiceLifecycle
import SOS
import Speech
import Systemd
import Threads
import Uplink

/// Keeps the sync thread for the daemon's lifetime; stops it on shutdown (the last sync and the
/// notices said are on disk already).
struct CloudSyncService: Service {
    let sync: CloudSync

    func run() async throws {
        try? await gracefulShutdown()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            sync.put(.shutdown(done: { done.resume() }))
        }
    }

    /// Starts the sync thread: the cloud and credentials are the uplink's (`UplinkSettings`),
    /// the heartbeat is read from the pipeline and the SOS lane, notices go to `speaker`.
    static func start(_ sync: CloudSync, configuration: PacerConfiguration, settings: SyncSettings, pipeline: PipelineThread, sos: SOSLane, speaker: Speaker?,
                      heartRate: HeartRateDays? = nil, log: DaemonLog) throws(ThreadStartError) {
        try sync.start(
            settings: settings, storePath: configuration.databasePath,
            log: { level, message in log(Self.priority(level), "sync", message) },
            state: { deviceState(pipeline: pipeline, sos: sos) }, heartRate: heartRate,
            say: { notice in
                guard let speaker else {
                    log(.notice, "sync", "notice (no voice to say it): \(notice.text)")
                    return .noVoice
                }
                // Muted, the runner asked for quiet: the notice waits until the coach is unmuted.
                if speaker.isMuted { return .notNow }
                speaker.say(Cue(time: Timestamp(milliseconds: WallClock.milliseconds()), kind: .notice, text: notice.text))
                return .offered
            },
            plan: { plan in pipeline.queue.put(.plan(plan)) },
            units: { units in pipeline.queue.put(.accountUnits(units)) },
            races: { races in pipeline.queue.put(.races(UpcomingRace.from(races))) })
    }

    /// What became of a notice given to the speaker, for the sync thread.
    static func outcome(of event: SpeechEvent) -> CloudSync.Input? {
        guard event.cue.kind == .notice else { return nil }
        switch event {
        case .started: return nil
        case .spoken: return .noticeOutcome(text: event.cue.cue.text, said: true)
        case .interrupted, .dropped, .failed: return .noticeOutcome(text: event.cue.cue.text, said: false)
        }
    }

    /// The heartbeat as of now, from the pipeline's status and the SOS lane's, each asked on its
    /// own thread and waited for at most two seconds (nil: the pipeline did not answer).
    static func deviceState(pipeline: PipelineThread, sos: SOSLane) -> DeviceState? {
        let statusReply = BlockingQueue<DaemonStatus>()
        pipeline.queue.put(.command(.status, reply: { if case .success(let status) = $0 { statusReply.put(status) } }))
        let laneReply = BlockingQueue<LaneStatus>()
        sos.put(.status(reply: { laneReply.put($0) }))
        let deadline = MonotonicTime.nanoseconds() + 2_000_000_000
        guard let status = statusReply.take(until: deadline) else { return nil }
        let monitoring = laneReply.take(until: deadline)?.monitoring ?? false
        return deviceState(status, sosMonitoring: monitoring, nowMs: WallClock.milliseconds())
    }

    static func deviceState(_ status: DaemonStatus, sosMonitoring: Bool, nowMs: Int64) -> DeviceState {
        let state = switch status.phase {
        case .idle: "idle"
        case .waitingForFix, .recording: "recording"
        case .paused: "paused"
        }
        var heartRate: DeviceState.HeartRate?
        if let bpm = status.strap.lastBpm, let age = status.strap.lastBpmAge, age.isFinite, age >= 0 {
            heartRate = .init(bpm: bpm, time: WireTime.text(milliseconds: nowMs - Int64(age * 1000)))
        }
        return DeviceState(time: WireTime.text(milliseconds: nowMs), state: state, battery_percent: status.deviceBatteryPercent,
                           strap_battery_percent: status.strap.batteryPercent, sos_monitoring: sosMonitoring, heart_rate: heartRate,
                           max_hr_bpm: nil, hr_daily: nil, in_private_place: status.inPrivatePlace)
    }

    static func priority(_ level: SyncLogLevel) -> JournalPriority {
        switch level {
        case .error: .error
        case .warning: .warning
        case .notice: .notice
        case .info: .info
        }
    }
}

extension SyncSettings {
    /// The uplink's cloud and credentials (one cloud, one way in: `CloudCredentials`), and
    /// `[upload]`'s sync timing; no cloud with `[upload] sync = false`.
    init(_ configuration: PacerConfiguration, link: CloudLink? = nil) {
        let uplink = UplinkSettings(configuration, link: link)
        self.init(url: configuration.upload.sync ? uplink.url : nil, token: uplink.token, client: uplink.client, syncEverySeconds: configuration.upload.syncEverySeconds,
                  stateEverySeconds: configuration.upload.stateEverySeconds, maxHeartRateBpm: configuration.maxHeartRateSetting)
    }
}
