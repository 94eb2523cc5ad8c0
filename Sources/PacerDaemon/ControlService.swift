import BlueZ
import CloudSync
import Control
import FoundationEssentials
import ModemManager
import PacerConfig
import PacerContract
import PacerCore
import PacerSession
import RunViews
import ServiceLifecycle
import SOS
import Uplink
import Store
import Synchronization
import Systemd
import Threads

/// The control socket: run commands go to the pipeline thread (the one writer); the runs list,
/// a run's detail and exports are read here from a read-only handle on the store, so a long
/// export never holds up the pipeline. Protocol: Sources/Control/PROTOCOL.md.
struct ControlService: Service {
    let server: ControlServer
    let pipeline: PipelineThread
    let strapSettings: StrapSettings
    let reader: RunStore
    let log: DaemonLog
    /// Mutes or unmutes the speaker (never safety or SOS messages).
    let voiceMute: @Sendable (Bool) -> Void
    let sos: SOSLane
    let uplink: Uplink
    /// The cloud link (`pacerctl cloud`), its file and the credentials it resolves to.
    let cloud: CloudAccess
    let cloudSync: CloudSync
    /// Monitors' answers heard (`pacerctl sos`).
    let answers: AnswerChannel

    func run() async throws {
        await withGracefulShutdownHandler {
            await server.serve { request, stream in
                try await handle(request, stream)
            }
        } onGracefulShutdown: {
            server.stop()
        }
    }

    private func handle(_ request: ControlRequest, _ stream: ControlReplyStream) async throws -> JSONValue? {
        switch request.command {
        case "status": return withSOSProblem(withUploads(try await pipelineCommand(.status)))
        case "sync":
            sos.put(.retryNow(reason: "pacerctl sync"))
            uplink.put(.wake(reason: "pacerctl sync"))
            return withUploads(.object(["cloud_sync": Self.json(await syncNow())]))
        case "run.start":
            if try request.optionalBool("planned") == true {
                guard try request.optionalString("workout") == nil else { throw ControlError.badRequest("planned: goes without workout") }
                return try await pipelineCommand(.startPlanned)
            }
            guard let path = try request.optionalString("workout") else { return try await pipelineCommand(.start) }
            // Read here, off the pipeline thread; the file is pacerd's to read (it runs as `pacer`).
            do {
                return try await pipelineCommand(.startWorkout(try WorkoutFile.load(path: path)))
            } catch let error as WorkoutLoadError {
                throw ControlError.badRequest("workout: \(error)")
            }
        case "speak":
            let text = try request.string("text")
            guard !text.isEmpty, text.utf8.count <= 1000 else { throw ControlError.badRequest("text: expected 1 to 1000 bytes of text to say") }
            return try await pipelineCommand(.say(text))
        case "readiness": return try await pipelineCommand(.readiness)
        case "plan": return try planListing()
        case "race": return try raceListing()
        case "race.start": return try await pipelineCommand(.startRace(try raceToStart(try request.optionalString("race"))))
        case "race.stop": return try await pipelineCommand(.stopRace)
        case "voice.mute":
            let muted = try request.bool("muted")
            voiceMute(muted)
            log(.notice, "voice", muted ? "coaching muted (safety and SOS messages are still spoken)" : "coaching unmuted")
            return .object(["muted": .bool(muted)])
        case "run.stop": return try await pipelineCommand(.stop)
        case "run.pause": return try await pipelineCommand(.control(.pause))
        case "run.resume": return try await pipelineCommand(.control(.resume))
        case "run.lap": return try await pipelineCommand(.control(.lap))
        case "runs.delete": return try await pipelineCommand(.delete(runID: Int64(try request.int("run", in: 1...Int.max))))
        case "runs.list":
            let limit = try request.int("limit", default: 20, in: 1...1000)
            let offset = try request.int("offset", default: 0, in: 0...Int.max)
            let view = try request.string("view", default: "json", oneOf: ["json", "text"])
            let (runs, total) = try query { () throws(StoreError) in (try reader.runs(limit: limit, offset: offset), try reader.runCount()) }
            if view == "text" { return ["text": .string(RunViews.listText(runs, total: total, page: offset / limit + 1, limit: limit))] }
            return try parse(RunViews.listJSON(runs, total: total))
        case "runs.show":
            let id = Int64(try request.int("run", in: 1...Int.max))
            let view = try request.string("view", default: "json", oneOf: ["json", "text"])
            let detail = try query { () throws(StoreError) in try reader.detail(id) }
            if view == "text" { return ["text": .string(RunViews.detailText(detail))] }
            return try parse(RunViews.detailJSON(detail))
        case "runs.export":
            let id = Int64(try request.int("run", in: 1...Int.max))
            let name = try request.string("format", default: "gpx", oneOf: RunExportFormat.allCases.map(\.rawValue))
            return try await export(id, RunExportFormat(rawValue: name)!, stream)
        case "strap.scan":
            let seconds = try request.int("seconds", default: 10, in: 1...60)
            return try await scanStraps(seconds: seconds)
        case "strap.pair":
            let text = try request.string("address")
            let address: StrapAddress?
            if text.isEmpty {
                address = nil
            } else {
                guard let parsed = StrapAddress(text) else { throw ControlError.badRequest("\"\(text)\" is not a Bluetooth address (AA:BB:CC:DD:EE:FF)") }
                address = parsed
            }
            do {
                let choice = try strapSettings.pair(address)
                log(.notice, "hr", address.map { "heart-rate strap \($0) paired by pacerctl" } ?? "heart-rate strap pairing forgotten by pacerctl")
                return .object(["straps": .array(choice.straps.map { .string($0.text) }), "source": .string(choice.source.rawValue)])
            } catch {
                throw ControlError.conflict(error.message)
            }
        case "sos.raise":
            let uuid = try await sosRequest { reply in .raise(source: "pacerctl", reply: reply) }
            return .object(["alert_id": .string(uuid)])
        case "sos.cancel":
            let count = try await sosRequest { reply in .cancel(reply: reply) }
            return .object(["cancelled": .number(Double(count))])
        case "sos.test":
            let uuid = try await sosRequest { reply in .test(reply: reply) }
            return .object(["alert_id": .string(uuid)])
        case "sos.status":
            let status = await withCheckedContinuation { (done: CheckedContinuation<LaneStatus, Never>) in
                sos.put(.status(reply: { done.resume(returning: $0) }))
            }
            return Self.json(status, answers: answers.recent)
        case "cloud": return cloudStatus()
        case "cloud.link": return try await linkToCloud(request)
        case "cloud.unlink": return try await unlinkFromCloud()
        default:
            throw ControlError.unknownCommand(request.command)
        }
    }

    /// `pacerctl plan`: the last sync's plan (read from the state directory, as pacerctl does
    /// when pacerd is down), which sessions a stored run followed, which is today.
    private func planListing() throws -> JSONValue {
        let listing: PlanListing
        do {
            listing = try PlanListing.make(storePath: reader.path, syncOn: cloud.syncSettings.url != nil, nowMs: WallClock.milliseconds(),
                                           followed: { (try? reader.plannedSessionsFollowed(among: $0)) ?? [] })
        } catch {
            throw ControlError.internalError("the last sync cannot be read: \(error)")
        }
        return try parse(String(decoding: try JSONEncoder().encode(listing), as: UTF8.self))
    }

    /// `pacerctl race`: the last sync's races of the runner.
    private func raceListing() throws -> JSONValue {
        let listing: RaceListing
        do {
            listing = try RaceListing.make(storePath: reader.path, syncOn: cloud.syncSettings.url != nil, nowMs: WallClock.milliseconds())
        } catch {
            throw ControlError.internalError("the last sync cannot be read: \(error)")
        }
        return try parse(String(decoding: try JSONEncoder().encode(listing), as: UTF8.self))
    }

    /// The sync thread's fetch, waited for at most 20 s (it may be in the middle of a slow
    /// request; pacerctl gives up after 30).
    private func syncNow() async -> SyncReport {
        let (answers, answer) = AsyncStream.makeStream(of: SyncReport.self)
        cloudSync.put(.syncNow(reply: { answer.yield($0) }))
        let timer = Task {
            try? await Task.sleep(for: .seconds(20))
            var late = SyncReport()
            late.error = "the cloud has not answered yet; the sync goes on (journalctl -u pacerd COMPONENT=sync)"
            answer.yield(late)
        }
        defer {
            timer.cancel()
            answer.finish()
        }
        for await report in answers { return report }
        return SyncReport()
    }

    /// `cloud_sync` of the `sync` reply: what the fetch found.
    static func json(_ report: SyncReport) -> JSONValue {
        .object([
            "reached": .bool(report.reached), "error": report.error.map { .string($0) } ?? .null,
            "changed": .array(report.changed.map { .string($0) }), "new_notices": .number(Double(report.newNotices)),
            "unsaid_notices": .number(Double(report.unsaid)), "fetched_at": report.fetchedAt.map { .string($0) } ?? .null,
        ])
    }

    /// The outbox, read here (its own read-only connection), added to a reply as `uploads`.
    private func withUploads(_ reply: JSONValue) -> JSONValue {
        guard case .object(var fields) = reply else { return reply }
        if let counts = try? reader.outboxCounts() {
            let uplinkStatus = uplink.status
            let retryIn = uplinkStatus.nextAttemptNs.map { Double($0 &- min($0, MonotonicTime.nanoseconds())) / 1e9 }
            fields["uploads"] = .object([
                "enabled": .bool(uplinkStatus.enabled),
                "runs": .number(Double(counts.runs)), "items": .number(Double(counts.items)),
                "bytes": .number(Double(counts.bytes)), "live_position": .bool(counts.position),
                "failures_in_a_row": .number(Double(uplinkStatus.failuresInARow)),
                "last_error": uplinkStatus.failuresInARow > 0 ? uplinkStatus.lastError.map { .string($0) } ?? .null : .null,
                "retry_in_s": retryIn.map { .number(($0 * 10).rounded() / 10) } ?? .null,
            ])
            // Set aside by the uplink: the server refused them for good; the rest went on.
            if let refused = try? reader.refusedUploads(limit: 3), case .object(var uploads)? = fields["uploads"] {
                uploads["refused"] = .number(Double(refused.total))
                uploads["refused_items"] = .array(refused.items.map { .string($0.description) })
                fields["uploads"] = .object(uploads)
            }
            // Race mode's positions waiting for the race's cloud, and those it refused.
            if let race = try? reader.racePositionCounts(), case .object(var uploads)? = fields["uploads"] {
                uploads["race_positions"] = .number(Double(race.waiting))
                uploads["race_positions_set_aside"] = .number(Double(race.setAside))
                fields["uploads"] = .object(uploads)
            }
        }
        return .object(fields)
    }

    /// "server rejects alerts: 401" as `sos_problem` and the newest alert's call as `sos_call`,
    /// read from the lane without waiting on it.
    private func withSOSProblem(_ reply: JSONValue) -> JSONValue {
        guard case .object(var fields) = reply else { return reply }
        fields["sos_problem"] = sos.health.serverProblem.map { .string($0) } ?? .null
        fields["sos_call"] = sos.health.call.map { .string($0.state) } ?? .null
        return .object(fields)
    }

    private func sosRequest<T: Sendable>(_ make: (@escaping @Sendable (Result<T, LaneRefusal>) -> Void) -> LaneInput) async throws -> T {
        let outcome = await withCheckedContinuation { (done: CheckedContinuation<Result<T, LaneRefusal>, Never>) in
            sos.put(make { done.resume(returning: $0) })
        }
        switch outcome {
        case .success(let value): return value
        case .failure(let refusal): throw ControlError.conflict(refusal.message)
        }
    }

    /// `pacerctl sos status --json`: a public interface (README "SOS").
    static func json(_ status: LaneStatus, answers: [HeardAnswer] = []) -> JSONValue {
        func optional(_ value: Int?) -> JSONValue { value.map { .number(Double($0)) } ?? .null }
        let alerts: [JSONValue] = status.recent.map { alert in
            .object([
                "alert_id": .string(alert.uuid), "kind": .string(alert.kind), "test": .bool(alert.test), "state": .string(alert.state),
                "raised": .string(Timestamp(milliseconds: alert.raisedMs).iso8601), "heart_rate": optional(alert.heartRate),
                "deliveries": .array(alert.deliveries.map(deliveryJSON)),
                "call_state": alert.callState.map { .string($0) } ?? .null,
            ])
        }
        return .object([
            "monitoring": .bool(status.monitoring),
            "heart_rate": optional(status.lastHeartRate),
            "heart_rate_age_s": status.lastHeartRateAgeSeconds.map { .number(($0 * 10).rounded() / 10) } ?? .null,
            "faults": .array(status.faults.map { .string($0) }),
            "signal": .string(status.signal),
            "motion": .string(status.motion),
            "asking": .bool(status.asking),
            "open_alerts": .array(status.openAlerts.map { .string($0) }),
            "channels": .array(status.channels.map { .string($0) }),
            "alerts": .array(alerts),
            "store_problem": status.storeProblem.map { .string($0) } ?? .null,
            "server_rejects": optional(status.serverRejects),
            "server_problem": status.serverProblem.map { .string($0) } ?? .null,
            "call": status.call.map { .object(["alert_id": .string($0.alertUUID), "state": .string($0.state)]) } ?? .null,
            "answers": .array(answers.map { heard in
                let answer = heard.answer
                return .object([
                    "id": .number(Double(answer.id)), "alert_id": .string(answer.alert_id), "from": .string(answer.from), "kind": .string(answer.kind),
                    "text": answer.text.map { .string($0) } ?? .null, "time": .string(answer.time), "outcome": .string(heard.outcome),
                ])
            }),
        ])
    }

    /// One delivery in `sos.status`.
    static func deliveryJSON(_ d: Delivery) -> JSONValue {
        func time(_ ms: Int64?) -> JSONValue { ms.map { .string(Timestamp(milliseconds: $0).iso8601) } ?? .null }
        let report: JSONValue = d.reportState.map { .object(["state": .string(SMSDeliveryState(rawValue: $0).description), "time": time(d.reportedMs)]) } ?? .null
        return .object([
            "sequence": .number(Double(d.sequence)), "type": .string(d.type), "channel": .string(d.key.channel.rawValue),
            "target": .string(d.key.target), "attempts": .number(Double(d.attempts)),
            "acknowledged": time(d.acknowledgedMs), "last_error": d.lastError.map { .string($0) } ?? .null, "replaced": time(d.replacedMs),
            "status": .string(DeliveryReportText.status(d)), "delivery_report": report,
        ])
    }

    /// The race `pacerctl race start [ID]` names (or the only or next one) from the last sync,
    /// read here, off the pipeline thread, with its course checked; or why there is none.
    private func raceToStart(_ id: String?) throws -> RaceMode {
        let races: [DeviceRace]
        do {
            races = try CloudSync.lastSync(storePath: reader.path)?.sync.sections.races?.races ?? []
        } catch {
            throw ControlError.internalError("the last sync cannot be read: \(error)")
        }
        switch RaceChoice.choose(races, id: id, nowMs: WallClock.milliseconds()) {
        case .failure(let refusal): throw ControlError.conflict(refusal.message)
        case .success(let race):
            do {
                return try RaceChoice.mode(race)
            } catch {
                throw ControlError.conflict("the course of \(race.name) cannot be run: \(error)")
            }
        }
    }

    private func pipelineCommand(_ command: RunCommand) async throws -> JSONValue {
        let outcome = await withCheckedContinuation { (done: CheckedContinuation<Result<DaemonStatus, CommandFailure>, Never>) in
            pipeline.queue.put(.command(command, reply: { done.resume(returning: $0) }))
        }
        switch outcome {
        case .success(let status): return status.json
        case .failure(let failure):
            switch failure.code {
            case .conflict: throw ControlError.conflict(failure.message)
            case .notFound: throw ControlError.notFound(failure.message)
            case .internalError: throw ControlError.internalError(failure.message)
            }
        }
    }

    /// Heart-rate devices in range, strongest first. Its own bus connection: BlueZ has one
    /// discovery session per client, and ending this one must not end the strap client's.
    private func scanStraps(seconds: Int) async throws -> JSONValue {
        let bus: BusConnection
        do {
            bus = try BusConnection.system()
        } catch {
            throw ControlError.unavailable("cannot reach the system bus: \(error)")
        }
        defer { bus.close() }
        let adapter = strapSettings.current.adapter
        let paired = Set(strapSettings.current.straps)
        do {
            let straps = try await StrapScanner.scan(bus: bus, adapter: adapter, duration: .seconds(seconds))
            return .object(["straps": .array(straps.map { strap in
                .object([
                    "address": .string(strap.address.text),
                    "name": strap.name.map(JSONValue.string) ?? .null,
                    "rssi_dbm": strap.rssi.map { JSONValue($0) } ?? .null,
                    "paired_with_pacer": .bool(paired.contains(strap.address)),
                    "connected": .bool(strap.connected),
                ])
            })])
        } catch {
            throw ControlError.unavailable(error.description)
        }
    }

    /// A store read, its errors worded for the client.
    private func query<T>(_ body: () throws(StoreError) -> T) throws(ControlError) -> T {
        do {
            return try body()
        } catch {
            if case .noSuchRun(let id) = error { throw ControlError.notFound("no run \(id)") }
            throw ControlError.internalError("\(error)")
        }
    }

    private func parse(_ json: String) throws -> JSONValue {
        do { return try JSONValue(parsing: json) } catch { throw ControlError.internalError("could not encode the reply: \(error)") }
    }

    /// Streams an export: a thread of its own reads the store and fills a small channel; chunks
    /// go out as the client takes them.
    private func export(_ id: Int64, _ format: RunExportFormat, _ stream: ControlReplyStream) async throws -> JSONValue? {
        guard let run = try query({ () throws(StoreError) in try self.reader.run(id) }) else { throw ControlError.notFound("no run \(id)") }
        if format == .gpsd, run.rawPruned {
            throw ControlError.conflict("run \(id)'s raw gpsd lines were removed by retention ([storage] keep_raw_days); GPX, TCX and HR exports remain")
        }
        let channel = ChunkChannel()
        let failure = Mutex<String?>(nil)
        let store = reader
        do {
            try DetachedThread.start {
                var pending = ""
                do {
                    try RunExporter.export(store, id, format) { text in
                        pending += text
                        if pending.utf8.count >= 32 * 1024 {
                            try channel.put(pending)
                            pending = ""
                        }
                    }
                    if !pending.isEmpty { try channel.put(pending) }
                } catch is ChunkChannel.Cancelled {
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
                channel.finish()
            }
        } catch {
            throw ControlError.internalError("export of run \(id): \(error)")
        }
        do {
            while let chunk = await channel.next() { try await stream.send(chunk: chunk) }
        } catch {
            channel.cancel()
            while await channel.next() != nil {}
            throw error
        }
        if let message = failure.withLock({ $0 }) {
            log(.error, "control", "export of run \(id) as \(format.rawValue) failed: \(message)", runID: id)
            throw ControlError.internalError("export failed part-way: \(message)")
        }
        return nil
    }
}

extension DaemonStatus {
    var json: JSONValue {
        var object: [String: JSONValue] = [
            "state": .string(phase.rawValue),
            "gps": .string(gps.rawValue),
            "line": .string(line),
            "distance_m": JSONValue((distance * 100).rounded() / 100),
            "moving_time_s": JSONValue((movingTime * 1000).rounded() / 1000),
        ]
        object["run"] = runID.map { JSONValue(Int($0)) } ?? .null
        object["store_problem"] = storeProblem.map(JSONValue.string) ?? .null
        object["last_sample_time"] = lastSampleTime.map { .string($0.iso8601) } ?? .null
        object["hr"] = strap.json
        object["readiness"] = readiness.map(JSONValue.string) ?? .null
        object["device_battery_percent"] = deviceBatteryPercent.map { JSONValue($0) } ?? .null
        object["race"] = race?.json ?? .null
        return .object(object)
    }
}

extension RaceStatus {
    var json: JSONValue {
        func rounded(_ value: Double?) -> JSONValue { value.map { JSONValue(($0 * 10).rounded() / 10) } ?? .null }
        return .object([
            "id": .string(id),
            "name": .string(name),
            "bib": JSONValue(bib),
            "course_m": rounded(courseMeters),
            "gun_time": gunTime.map { .string($0.iso8601) } ?? .null,
            "progress_m": rounded(progress),
            "started_at": startedAt.map { .string($0.iso8601) } ?? .null,
            "finished_at": result.map { .string($0.finishTime.iso8601) } ?? .null,
            "gun_s": rounded(result?.gunSeconds),
            "net_s": rounded(result?.netSeconds),
            "off_course": .bool(offCourse),
            "place": place.map { JSONValue($0) } ?? .null,
            "of": of.map { JSONValue($0) } ?? .null,
            "refused": refused.map(JSONValue.string) ?? .null,
        ])
    }
}

extension StrapStatus {
    var json: JSONValue {
        func rounded(_ value: Double?) -> JSONValue { value.map { JSONValue(($0 * 10).rounded() / 10) } ?? .null }
        return .object([
            "state": .string(link.rawValue),
            "address": address.map(JSONValue.string) ?? .null,
            "name": name.map(JSONValue.string) ?? .null,
            "connected": .bool(link == .connected),
            "battery_percent": batteryPercent.map { JSONValue($0) } ?? .null,
            "reading": .string(readingName),
            "bpm": liveBpm.map { JSONValue($0) } ?? .null,
            "last_bpm": lastBpm.map { JSONValue($0) } ?? .null,
            "last_bpm_age_s": rounded(lastBpmAge),
            "problem": problem.map(JSONValue.string) ?? .null,
            "malformed_packets": JSONValue(malformedPackets),
        ])
    }
}
