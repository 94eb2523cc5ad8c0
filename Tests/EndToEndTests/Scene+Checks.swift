import Foundation
import PacerContract
import PacerCore
import PacerTestSupport
import Store
import Testing

/// What the scenario must have left behind, checked once pacerd has stopped.
extension Scene {
    var store: RunStore {
        get throws { try RunStore(path: world.daemon.databasePath, readOnly: true) }
    }

    /// The one run, exported as its raw gpsd log (the lines pacerd received, heart rate included).
    func exportRawLog() async throws -> String {
        let raw = world.daemon.directory.file("run-1.gpsd.jsonl")
        let export = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"),
                                                 ["runs", "export", "1", "--format", "gpsd", "-o", raw, "--db", world.daemon.databasePath])
        guard export.status == 0 else { throw FixtureError("pacerctl runs export failed (\(export.status)): \(export.stderr)") }
        return raw
    }

    /// One run, finished and uploaded, that went on across the gpsd restart and is still exactly
    /// the replay of its raw log.
    func checkTheStore(plan: RunPlan) async throws {
        let store = try store
        let runs = try store.runs(limit: 10, offset: 0)
        #expect(runs.count == 1, "one run: \(runs.map(\.id))")
        let run = try #require(runs.first)
        #expect(run.state == .finished)
        #expect(run.uploadState == .uploaded)
        #expect(run.heartRateMax == Int(WholeRunTests.sosBpm), "the heart rate was recorded through the SOS")
        let samples = try store.track(run.id).samples
        #expect(samples.contains { $0.time <= log.times[plan.restartAfter] }, "from the first gpsd")
        #expect(samples.contains { $0.time >= log.times[plan.partB.lowerBound] }, "and from the second")
        let away = plan.partA.upperBound..<plan.partB.lowerBound
        #expect(!samples.contains { away.contains(log.epoch(atOrAfter: $0.time) ?? -1) }, "nothing from the epochs sent while gpsd was away")
        #expect(samples.last.map { $0.time >= log.times[log.count - 2] } == true, "to the end of the log")

        let replayDB = world.daemon.directory.file("replay.db")
        let replay = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["replay", "--gps", try await exportRawLog(), "--record", replayDB])
        #expect(replay.status == 0, "\(replay.stderr)")
        let replayed = try RunStore(path: replayDB, readOnly: true)
        #expect(try replayed.track(1).samples == samples, "live equals replay")
        #expect(try replayed.run(1)?.distance == run.distance)
    }

    /// The run exactly once and complete, as the device stored it; the newest live position; the
    /// alert and its cancel; the two text messages.
    func checkTheCloud(alertID: String) throws {
        let cloud = world.cloud
        let run = try #require(try store.runs(limit: 1, offset: 0).first)
        let samples = try store.track(run.id).samples

        let runs = try #require(try cloud.json("/v1/runs")["runs"] as? [[String: Any]])
        #expect(runs.count == 1, "the run once: \(runs.map { $0["run_id"] ?? "?" })")
        #expect(runs.first?["run_id"] as? String == run.uuid)
        // Exactly as the device stored it (JSONDecoder: no rounding on the way).
        let detail = try cloud.document("/v1/runs/\(run.uuid)")
        let summary = try #require(detail["summary"])
        #expect(summary["state"]?.string == "finished")
        #expect(summary["distance_m"]?.number == run.distance)
        #expect(summary["moving_time_s"]?.number == run.movingTime)
        #expect(summary["elapsed_time_s"]?.number == run.elapsedTime)
        #expect(summary["start_time"]?.string == run.startTime.iso8601)
        #expect(summary["end_time"]?.string == run.endTime?.iso8601)
        #expect(summary["hr_max"]?.int == run.heartRateMax)
        #expect(summary["hr_avg"]?.number == run.heartRateAverage)
        #expect(summary["chunks"]?.int == (samples.count + TrackChunkFormat.samplesPerChunk - 1) / TrackChunkFormat.samplesPerChunk)

        let uploaded = try #require(detail["samples"]?.array)
        #expect(uploaded.count == samples.count, "every sample")
        let times = uploaded.map { $0["time"]?.string.flatMap(Timestamp.init(iso8601:))?.milliseconds ?? -1 }
        #expect(times == samples.map(\.time.milliseconds), "the device's samples, in order")
        #expect(Set(times).count == times.count, "none twice")
        // Every field as the device packaged it (application/x-pacer-track, heart rate merged by
        // time): the cloud's samples written back in that format are the device's lines.
        let heartRate = try store.track(run.id).heartRate
        let packaged = TrackChunkFormat.chunks(samples: samples, heartRate: heartRate, hiding: []).joined().split(separator: "\n").map(String.init)
        let held = uploaded.map { sample in
            TrackChunkFormat.line(
                TrackSample(time: sample["time"]?.string.flatMap(Timestamp.init(iso8601:)) ?? Timestamp(milliseconds: -1),
                            coordinate: Coordinate(latitude: sample["lat"]?.number ?? .nan, longitude: sample["lon"]?.number ?? .nan),
                            speed: sample["speed_mps"]?.number ?? .nan, distance: sample["distance_m"]?.number ?? .nan,
                            moving: sample["moving"]?.bool ?? false, movingTime: 0, altitude: sample["alt_m"]?.number),
                heartRate: sample["hr"]?.int)
        }
        let differing = zip(held, packaged).filter { $0 != $1 }
        #expect(held.count == packaged.count && differing.isEmpty, "\(differing.count) samples differ, the first: \(differing.first.map { "\($0.0) vs \($0.1)" } ?? "-")")
        let fields = held.map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(fields.contains { $0[6] != "" }, "with heart rate")
        // The receiver's 3D fixes give altitude: the device records it, the cloud keeps it (its elevation).
        #expect(fields.contains { $0.count == 8 }, "with altitude")

        let position = try cloud.json("/v1/position")
        #expect(position["run_id"] as? String == run.uuid)
        let positionTime = (position["time"] as? String).flatMap(Timestamp.init(iso8601:))
        let during = samples.first.flatMap { first in samples.last.map { first.time...$0.time } }
        #expect(positionTime.map { during?.contains($0) == true } == true, "a position of this run: \(position)")

        let alerts = try #require(try cloud.json("/v1/alerts")["alerts"] as? [[String: Any]])
        #expect(alerts.count == 1, "\(alerts)")
        let alert = try #require(alerts.first)
        #expect(alert["alert_id"] as? String == alertID)
        #expect(alert["kind"] as? String == "hr_high")
        #expect(alert["test"] as? Bool == false)
        #expect(alert["state"] as? String == "cancelled")
        #expect(alert["latest_sequence"] as? Int == 1, "the alert, then its cancel")
        let latest = alert["latest"] as? [String: Any]
        #expect(latest?["type"] as? String == "cancelled")
        #expect(latest?["run_id"] as? String == run.uuid)

        let texts = try world.modem.sent()
        #expect(texts.count == 2, "the alert and the false alarm, once each: \(texts.map(\.text))")
        #expect(texts.allSatisfy { $0.number == EndToEndWorld.contact })
        let first = try #require(texts.first).text
        #expect(first.hasPrefix("SOS: HIGH heart rate \(WholeRunTests.sosBpm) bpm"), "\(first)")
        #expect(first.contains("(limit \(EndToEndWorld.highBpm))") && first.contains("Dev \(EndToEndWorld.device)"), "\(first)")
        #expect(first.contains("https://osm.org/?mlat="), "with the position: \(first)")
        #expect(GSM7.fitsOneMessage(first), "\(first)")
        #expect(texts.last?.text.hasPrefix("FALSE ALARM, I am OK") == true)
    }

    /// Every step announcement a replay of the run's raw log decides was said, in that order, and
    /// the SOS notices were; each cue said has its WAV file, with sound in it.
    func checkWhatWasSpoken() async throws {
        let cues = world.cues
        let decided = try await ReplayCue.decided(gpsd: try await exportRawLog(), workout: world.workoutPath)
        let steps = decided.filter { $0.kind == "step" }.map(\.text)
        #expect(steps.count == EndToEndWorld.stepAnnouncements)
        #expect(steps.last == "Workout complete.")
        let stepCues = cues.filter { $0.kind == "step" }
        #expect(stepCues.map(\.text) == steps)
        #expect(stepCues.allSatisfy { $0.fate == "said" }, "\(stepCues)")

        let sos = cues.filter { $0.kind == "sos" && $0.fate == "said" }.map(\.text)
        for notice in [AlertText.spokenRaised(.hrHigh), "Emergency alert sent by text message to 1 contact and to the server.",
                       "Alert cancelled. Sending false alarm message.", "False alarm message sent by text message to 1 contact and to the server."] {
            #expect(sos.contains(notice), "said: \(sos)")
        }
        #expect(cues.contains { $0.kind == "run_state" && $0.fate == "said" && $0.text.hasPrefix("Run stopped.") })

        // One NNNN-kind.wav per cue said, numbered in the order spoken; a cue cut off may have
        // one (with what it said) or not (cut off before the speech thread took it up).
        let directory = world.speechDirectory
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".wav") }.sorted()
        let kinds = Set(cues.map(\.kind))
        #expect(files.allSatisfy { file in kinds.contains { file.hasSuffix("-\($0).wav") } }, "\(files)")
        for kind in kinds {
            let wavs = files.count(where: { $0.hasSuffix("-\(kind).wav") })
            let said = cues.count(where: { $0.kind == kind && $0.fate == "said" })
            let cut = cues.count(where: { $0.kind == kind && $0.fate == "interrupted" })
            #expect((said...(said + cut)).contains(wavs), "\(kind): \(wavs) WAV files for \(said) cues said and \(cut) cut off")
        }
        // Nothing cuts off a step here, nor an SOS notice (nothing outranks them): one file each.
        let sosCues = cues.filter { $0.kind == "sos" }
        #expect(sosCues.allSatisfy { $0.fate == "said" }, "\(sosCues)")
        for (cue, file) in zip(stepCues + sosCues, files.filter { $0.hasSuffix("-step.wav") } + files.filter { $0.hasSuffix("-sos.wav") }) {
            let seconds = try Self.wavSeconds(directory + "/" + file)
            #expect(seconds >= 0.3, "\(file) (\(cue)) holds \(seconds) s of sound")
        }
    }

    /// The seconds of sound in a 16-bit mono PCM WAV file, checking that its header describes the file.
    static func wavSeconds(_ path: String) throws -> Double {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        guard bytes.count >= 44, bytes[0..<4] == [0x52, 0x49, 0x46, 0x46], bytes[8..<12] == [0x57, 0x41, 0x56, 0x45],
            bytes[36..<40] == [0x64, 0x61, 0x74, 0x61], u32(40) == bytes.count - 44, u32(4) == bytes.count - 8
        else { throw FixtureError("\(path) is not a complete PCM WAV file (\(bytes.count) bytes)") }
        let rate = u32(24)
        guard rate > 0 else { throw FixtureError("\(path): sample rate 0") }
        return Double(u32(40)) / Double(rate * 2)
    }

    /// The story the journal tells: gpsd lost and found, the strap lost and found, every stage of
    /// the SOS, the upload held back by the outage and then done once.
    func checkTheJournal(plan: RunPlan, alertID: String, outageBegan: Int, gpsPort: UInt16) throws {
        let journal = world.journal.map(\.message)
        let run = try #require(try store.runs(limit: 1, offset: 0).first)
        let samples = try store.track(run.id).samples

        // gpsd: lost, reconnected, and the gap bridged by as long as the store's samples say.
        let lost = journal.firstIndex { $0.hasPrefix("lost gpsd at 127.0.0.1:\(gpsPort) (") && $0.hasSuffix("; reconnecting") }
        let connected = journal.indices.filter { journal[$0] == "connected to gpsd at 127.0.0.1:\(gpsPort)" }
        #expect(lost != nil)
        #expect(connected.count >= 2 && connected.contains { $0 > lost ?? .max }, "reconnected after gpsd was lost")
        let after = try #require(samples.firstIndex { $0.time >= log.times[plan.partB.lowerBound] })
        let gap = samples[after].time.seconds(since: samples[after - 1].time)
        #expect(journal.contains("GPS fix regained after \(Int(gap.rounded())) s; the gap is bridged"), "a \(gap) s gap")

        // The strap: dropped, then connected again.
        let dropped = journal.firstIndex { $0.hasPrefix("heart-rate strap \(EndToEndWorld.strap) disconnected (") && $0.hasSuffix("; reconnecting") }
        let again = journal.firstIndex { $0.hasSuffix("(\(EndToEndWorld.strap)) connected again") }
        #expect(dropped != nil && again != nil && dropped! < again!, "dropped at \(dropped ?? -1), back at \(again ?? -1)")

        // Every stage of the SOS, for this alert, within the 5 s deadline as pacerd measured it.
        for stage in ["detected", "confirmed", "recorded"] {
            #expect(journal.contains { $0.hasPrefix("SOS alert \(alertID) \(stage): ") }, "\(stage)")
        }
        for channel in ["sms", "https"] {
            #expect(journal.contains { $0.hasPrefix("SOS alert \(alertID) dispatched: \(channel) ") }, "dispatched by \(channel)")
            #expect(journal.contains { $0.hasPrefix("SOS alert \(alertID) acknowledged by \(channel) ") }, "acknowledged by \(channel)")
            #expect(journal.contains { $0.hasPrefix("SOS cancelled \(alertID) acknowledged by \(channel) ") }, "cancel acknowledged by \(channel)")
        }
        let raised = journal.filter { $0.hasPrefix("SOS alert \(alertID) raised: hr_high, heart rate \(WholeRunTests.sosBpm) bpm;") }
        #expect(raised.count == 1, "raised once: \(raised)")
        let sinceBreach = raised.first.flatMap { line in
            line.range(of: #"\(([0-9.]+) ms after the first\)"#, options: .regularExpression).flatMap { Double(line[$0].dropFirst().prefix { $0 != " " }) }
        }
        #expect(sinceBreach.map { $0 <= 5000 } == true, "dispatched \(sinceBreach ?? -1) ms after the first sample above the limit")
        #expect(journal.contains("SOS alert \(alertID): sending \"false alarm, I am OK\" (cancelled by the runner)"))

        // One run, started with the workout, stopped once.
        #expect(journal.count(where: { $0.hasPrefix("run started") }) == 1)
        #expect(journal.contains { $0.hasPrefix("run started") && $0.hasSuffix("with the workout \"Park intervals\"") })
        #expect(journal.count(where: { $0.hasPrefix("run 1 stopped: ") }) == 1)

        // The upload: queued, failing while the cloud was away, then done once.
        let chunks = (samples.count + TrackChunkFormat.samplesPerChunk - 1) / TrackChunkFormat.samplesPerChunk
        #expect(journal.contains { $0.hasPrefix("upload: run 1 queued: \(chunks) chunk(s), ") })
        #expect(journal[outageBegan...].contains { $0.hasPrefix("upload of ") && $0.contains(" failed (") }, "failures while the cloud was away")
        #expect(journal.contains { $0.hasPrefix("upload: ") && $0.contains(" reachable again after ") })
        #expect(journal.count(where: { $0 == "upload: run 1 (\(run.uuid)) is in the cloud" }) == 1)
        #expect(journal.contains("stopped"), "stopped cleanly")
    }
}
