import BlueZ
import CloudSync
import Control
import Logging
import PacerConfig
import PacerCore
import PacerSession
import HTTPClient
import ModemManager
import ServiceLifecycle
import SOS
import Speech
import Uplink
import Store
import Systemd
import UnixSignals

/// pacerd's start-up and lifetime: configuration, store, the pipeline thread and the services
/// around it, until SIGTERM.
public enum Daemon {
    /// sysexits(3) codes, which systemd shows with the unit's failure.
    public enum ExitCode {
        public static let ok: Int32 = 0
        public static let usage: Int32 = 64
        public static let cannotCreate: Int32 = 73
        public static let config: Int32 = 78
        public static let software: Int32 = 70
    }

    /// SQLite page cache per connection (the recorder's and the control socket's reader).
    static let storeCacheKiB = 512

    /// Runs the daemon; returns its exit status.
    public static func run(configPath: String?) async -> Int32 {
        let journal = JournalLogger(identifier: "pacerd")
        let log = DaemonLog(journal: journal)
        let notifier = ServiceNotifier()

        let configuration: PacerConfiguration
        do {
            configuration = try PacerConfiguration.load(path: configPath)
        } catch {
            log(.error, "config", "cannot start: \(error)")
            notifier.send(.status("Not started: invalid configuration (\(error))"))
            return ExitCode.config
        }

        let store: RunStore
        var resumeCandidate: StoredRun?
        do {
            store = try RunStore(path: configuration.databasePath, cacheKiB: Self.storeCacheKiB)
            let interrupted = try store.recoverInterruptedRuns()
            for runID in interrupted {
                log(.warning, "store", "run \(runID) was interrupted (pacerd or the device stopped while it recorded); it is kept with its data up to the last durable batch", runID: runID)
            }
            if let newest = interrupted.last, try store.canResume(newest) {
                resumeCandidate = try store.run(newest)
            }
        } catch {
            log(.error, "store", "cannot open the run store: \(error)")
            notifier.send(.status("Not started: run store unavailable (\(error))"))
            return ExitCode.cannotCreate
        }

        // The link made by `pacerctl cloud link`; a broken file is reported and ignored.
        let linkFile = CloudLinkFile(storePath: configuration.databasePath)
        var link: CloudLink?
        do {
            link = try linkFile.read()
        } catch {
            log(.error, "upload", "\(error)")
        }
        let cloud = CloudAccess(configuration: configuration, link: link, file: linkFile)
        if cloud.credentials.linkOverridden {
            log(.notice, "upload", "[upload] token is set, so it is used instead of the cloud link in \(linkFile.path)")
        }

        let pipeline = PipelineThread()
        let newestPosition = NewestPosition()
        let speaker = VoiceService.makeSpeaker(configuration.voice, log: log)
        let speak: @Sendable (Cue, UInt64) -> Void = { cue, triggeredNs in
            if let speaker { speaker.say(cue, offeredAt: triggeredNs) } else { log(.info, "voice", "cue (\(cue.kind.rawValue)): \(cue.text)") }
        }

        // The SOS lane starts before anything else that could feed it. Its store failing is not
        // fatal: alerts then go out from memory (and the journal says so).
        let sos = SOSLane()
        let alertStore: AlertStore?
        do {
            alertStore = try AlertStore(path: sosDatabasePath(configuration))
        } catch {
            log(.critical, "sos", "\(error); SOS alerts will be sent but not recorded")
            alertStore = nil
        }
        do {
            try sos.start(settings: cloud.laneSettings, store: alertStore, channels: Self.alertChannels(configuration, lane: sos, cloud: cloud),
                          caller: Self.alertCaller(configuration, log: log),
                          log: { level, message, fields in log(Self.priority(level), "sos", message, fields: fields) },
                          onCue: speak)
        } catch {
            log(.critical, "sos", "cannot start the SOS lane: \(error)")
            return ExitCode.software
        }
        // Store and forward, on a thread of its own; it starts by sending what is owed from before.
        let uplink = Uplink()
        let cloudSync = CloudSync()
        let answers = AnswerChannel()
        do {
            // The run pacerd may continue is held back until the pipeline decides (RunSession).
            try uplink.start(settings: cloud.uplinkSettings, storePath: configuration.databasePath,
                             log: { level, message in log(Self.priority(level), "upload", message) }, holding: resumeCandidate?.id,
                             onRound: { round in if round.sent > 0, round.failure == nil { cloudSync.put(.wake(reason: "an upload got through")) } },
                             onRace: { raceID, answer in
                                 switch answer {
                                 case .accepted(let reply):
                                     if let place = reply.place { pipeline.queue.put(.raceReply(raceID: raceID, .place(place, of: reply.of))) }
                                 case .refused(let why):
                                     pipeline.queue.put(.raceReply(raceID: raceID, .refused(why)))
                                 }
                             })
        } catch {
            log(.critical, "upload", "cannot start the uplink: \(error)")
            return ExitCode.software
        }
        if configuration.sos.rules.enabled {
            let where_ = cloud.laneSettings.targets.map { $0.channel.rawValue }
            log(.notice, "sos", "SOS monitoring on: heart rate above \(configuration.sos.rules.highBpm) or below \(configuration.sos.rules.lowBpm) bpm raises an alert"
                + (where_.isEmpty ? "; but no channel is configured ([sos] contacts, [upload] url, [sos] hook)" : " (\(Set(where_).sorted().joined(separator: ", ")))"))
        }

        let strapFile = PairedStrapFile(storePath: configuration.databasePath)
        var paired: StrapAddress?
        do {
            paired = try strapFile.read()
        } catch {
            log(.error, "hr", "\(error)")
        }
        let strapSettings = StrapSettings(configuration: configuration, file: strapFile, paired: paired)

        // The control socket is bound before READY=1, so `pacerctl` works as soon as systemd says
        // the service is up. Without it the daemon still records (buttons), so it is not fatal.
        var control: ControlService?
        do {
            let groupID = SystemGroup.id(named: configuration.controlGroup)
            if groupID == nil {
                log(.warning, "control", "group '\(configuration.controlGroup)' ([control] group) does not exist; only root and pacerd's own user may use the control socket")
            }
            let server = try ControlServer(configuration: .init(socketPath: configuration.controlSocket, group: groupID))
            control = ControlService(server: server, pipeline: pipeline, strapSettings: strapSettings, reader: try RunStore(path: configuration.databasePath, readOnly: true, cacheKiB: Self.storeCacheKiB), log: log,
                                     voiceMute: { muted in speaker?.setMuted(muted) }, sos: sos, uplink: uplink, cloud: cloud,
                                     cloudSync: cloudSync, answers: answers)
        } catch {
            log(.error, "control", "no control socket, pacerctl cannot reach pacerd: \(error)")
        }

        // Trapped before READY=1: SIGHUP's default action would end the process.
        let hangups = await UnixSignalsSequence(trapping: .sighup)

        // The strap's readings outside runs, summed up per day for the heartbeat (`hr_daily`).
        let heartRateDays = HeartRateDays(storePath: configuration.databasePath, log: { level, message in log(CloudSyncService.priority(level), "sync", message) })
        pipeline.start(configuration: configuration, store: store, log: log, resumeCandidate: resumeCandidate,
                       onCue: speak, toSOS: { input in
                           newestPosition.observe(input)
                           sos.put(input)
                       }, sosIsAsking: { sos.isAsking }, toUplink: { uplink.put($0) },
                       heartRateOutsideRun: { heartRateDays.add(bpm: $0, timeMs: $1) }) { status in
            notifier.send(.status(status.line))
            cloudSync.runStateIs(status.phase.rawValue, inPrivatePlace: status.inPrivatePlace)
        }
        do {
            try CloudSyncService.start(cloudSync, configuration: configuration, settings: cloud.syncSettings, pipeline: pipeline, sos: sos, speaker: speaker,
                                       heartRate: heartRateDays, log: log)
        } catch {
            log(.critical, "sync", "cannot start the sync thread: \(error)")
            return ExitCode.software
        }

        // Monitors' answers to alerts: a long-poll on a connection of its own (issue 22).
        do {
            try AnswerService.start(answers, configuration: configuration, cloud: cloud, sos: sos, newest: newestPosition, speaker: speaker, log: log)
        } catch {
            log(.critical, "answers", "cannot start the answers thread: \(error)")
            return ExitCode.software
        }

        var logger = Logger(label: "lifecycle") { label in JournalLogHandler(journal: journal, label: label) }
        logger.logLevel = .notice
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: PipelineService(pipeline: pipeline, notifier: notifier, log: log), serviceName: "pipeline"),
            .init(service: GPSService(host: configuration.gpsHost, port: configuration.gpsPort, pipeline: pipeline, log: log), serviceName: "gps"),
            .init(service: WatchdogService(pipeline: pipeline, sos: sos, notifier: notifier, log: log), successTerminationBehavior: .ignore, serviceName: "watchdog"),
            .init(service: HeartRateService(settings: strapSettings, pipeline: pipeline, sos: sos), serviceName: "hr"),
            .init(service: SOSService(lane: sos), serviceName: "sos"),
            .init(service: UplinkService(uplink: uplink), serviceName: "upload"),
            .init(service: CloudSyncService(sync: cloudSync), serviceName: "sync"),
            .init(service: AnswerService(answers: answers), serviceName: "answers"),
            .init(service: NetworkWatchService(uplink: uplink, sos: sos, cloudSync: cloudSync, answers: answers, log: log), successTerminationBehavior: .ignore, serviceName: "network"),
            .init(service: ReloadService(signals: hangups, configPath: configPath, pipeline: pipeline, strapSettings: strapSettings, sos: sos, uplink: uplink,
                                         cloudSync: cloudSync, notifier: notifier, log: log, startConfiguration: configuration, cloud: cloud),
                  serviceName: "reload"),
        ]
        if configuration.memoryTrim { services.append(.init(service: MemoryTrimService(log: log, sos: sos), serviceName: "memory")) }
        if let control { services.append(.init(service: control, serviceName: "control")) }
        if let speaker {
            services.append(.init(service: VoiceService(speaker: speaker, log: log, onOutcome: { event in
                if let outcome = CloudSyncService.outcome(of: event) { cloudSync.put(outcome) }
            }), serviceName: "voice"))
        }
        if let device = configuration.buttonDevice {
            services.append(.init(service: ButtonService(devicePath: device, keyCodes: configuration.buttonKeyCodes, pipeline: pipeline, sos: sos, log: log),
                                  serviceName: "buttons"))
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger))
        do {
            try await group.run()
        } catch {
            log(.error, "daemon", "stopped on an error: \(error)")
            return ExitCode.software
        }
        return ExitCode.ok
    }

    /// SMS, HTTPS and the hook, each only when configured. Channels are fixed at start; a reload
    /// changes targets (contacts, URL) but adds no channel that was not there.
    static func alertChannels(_ configuration: PacerConfiguration, lane: SOSLane, cloud: CloudAccess) -> [any AlertChannel] {
        var channels: [any AlertChannel] = []
        let openBus: @Sendable () throws(BusError) -> BusConnection = { () throws(BusError) in try BusConnection.system() }
        // Every text asks for a status report; each report reaches the lane as an input of its own.
        channels.append(SMSChannel(sender: SMSSender(openBus: openBus), reports: SMSDeliveryReports(openBus: openBus),
                                   onReport: { lane.put(.smsReport($0, $1)) }))
        // The uplink's client settings and credentials: one cloud, one way in.
        let client = HTTPClient(configuration: UplinkSettings(configuration).client)
        channels.append(HTTPSChannel(client: client, currentToken: { cloud.credentials.token }))
        if !configuration.sos.hook.isEmpty { channels.append(HookChannel(argv: configuration.sos.hook)) }
        return channels
    }

    /// The voice call of `[sos] call`, always available (a reload may set the number); speech
    /// into it only with `[sos] call_audio_device`, fixed at start like the hook.
    static func alertCaller(_ configuration: PacerConfiguration, log: DaemonLog) -> AlertCaller {
        let voice = VoiceCaller(openBus: { () throws(BusError) in try BusConnection.system() })
        guard let device = configuration.sos.callAudioDevice else { return AlertCaller(voice: voice) }
        let settings = SpeechSettings(voice: configuration.voice.voice, wordsPerMinute: configuration.voice.rateWordsPerMinute,
                                      volumePercent: 100)
        return AlertCaller(voice: voice) {
            CallSpeech {
                do {
                    return SpokenLoop(speaker: try Speaker(settings: settings, sink: try ALSASink(device: device)))
                } catch {
                    log(.error, "sos", "cannot speak into the call through \(device) ([sos] call_audio_device): \(error); the call stays silent")
                    return nil
                }
            }
        }
    }

    static func priority(_ level: UplinkLogLevel) -> JournalPriority {
        switch level {
        case .error: .error
        case .warning: .warning
        case .notice: .notice
        case .info: .info
        }
    }

    static func priority(_ level: LaneLogLevel) -> JournalPriority {
        switch level {
        case .critical: .critical
        case .error: .error
        case .warning: .warning
        case .notice: .notice
        case .info: .info
        }
    }

    /// `pacerd --check-config FILE`: the same checks as at start, without starting.
    public static func checkConfig(path: String) -> (ok: Bool, message: String) {
        do {
            _ = try PacerConfiguration.load(path: path)
            return (true, "\(path): ok")
        } catch {
            return (false, error.description)
        }
    }
}
