import Foundation
import PacerCore
import PacerTestSupport
import Testing

/// pacerd's SOS lane end to end: the simulated strap (bluetoothd) and modem (ModemManager) on
/// one private dbus-daemon, a real HTTPS server for `/v1/alerts`, a hook script. The heart rate
/// is played from ../shared/data/hr, a trimmed window around each event, one notification a
/// second as the strap sends them. One test at a time: side by side (each has a world of its
/// own) two of them failed in the start burst, an arrest asked about instead of raised at once
/// and a raise 0.3 s before its lower bound, as the replays' 1 Hz timing slipped.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SOSTests {
    static let strap = "C8:4F:0E:12:34:56"
    static let contacts = ["+393471234567", "+447700900123"]

    final class World: @unchecked Sendable {
        let bus: PrivateBus
        let bluetooth: BluetoothSimulator
        let modem: ModemManagerSimulator
        let sink: HTTPSSink
        let daemon: DaemonFixture
        let hookLog: String

        init(sinkRules: HTTPSSink.Rules = .init(), modem scenario: ModemManagerSimulator.Scenario = .init(sendDelay: 0.3),
             gpsPort: UInt16? = nil, extraSOS: String = "") throws {
            bus = try PrivateBus()
            bluetooth = try BluetoothSimulator(.init(straps: [.init(address: SOSTests.strap)]), bus: bus)
            modem = try ModemManagerSimulator(scenario, bus: bus)
            sink = try HTTPSSink(tls: true, rules: sinkRules)
            daemon = try DaemonFixture(gpsPort: try gpsPort ?? FreePort.tcp())
            hookLog = daemon.directory.file("hook.log")
            let hook = daemon.directory.file("hook.sh")
            try """
                #!/bin/sh
                body=$(cat)
                printf '%s %s %s %s\\n' "$PACER_ALERT_TYPE" "$PACER_ALERT_KIND" "$PACER_ALERT_SEQUENCE" "$body" >> \(hookLog)
                """.write(toFile: hook, atomically: true, encoding: .utf8)
            chmod(hook, 0o755)
            try daemon.writeConfig("""
                [hr]
                strap = "\(SOSTests.strap)"
                [voice]
                output = "none"
                [sos]
                enabled = true
                hr_high_bpm = 205
                hr_low_bpm = 35
                contacts = [\(SOSTests.contacts.map { "\"\($0)\"" }.joined(separator: ", "))]
                hook = ["\(hook)"]
                device_name = "pacer-test"
                retry_max_s = 2
                attempt_timeout_s = 5
                \(extraSOS)
                [upload]
                url = "\(sink.url)"
                ca_file = "\(sink.caFile!)"
                token = "device-secret"
                # The sink takes alerts only; its scripted answers are for them.
                sync = false
                """)
        }

        func start() async throws {
            try await daemon.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
            try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["state"] as? String == "connected" }
        }

        func close() {
            daemon.cleanUp()
            sink.stop()
            modem.close()
            bluetooth.close()
            bus.stop()
        }

        /// Plays heart-rate values at 1 Hz as strap notifications and returns once the last has
        /// gone. The simulated strap keeps the time (`playOnce`): sending each value from here,
        /// one `busctl` per second, made them late by seconds when the suite loaded the machine,
        /// and the 5 s deadline then measured the test's own delay.
        func play(_ values: [Int]) async throws {
            try await offPool { try self.bluetooth.playOnce(address: SOSTests.strap, rateHz: 1, bpm: values.map { UInt16(clamping: $0) }) }
            try await Task.sleep(for: .seconds(values.count))
            try await waitOffPool(timeout: .seconds(30), every: .milliseconds(100), orFail: "the strap was still playing 30 s after its last value was due") {
                try !self.bluetooth.stats(address: SOSTests.strap).streaming
            }
        }

        /// The text messages the simulated modem sent (busctl, off the cooperative pool).
        func sentTexts() async throws -> [ModemManagerSimulator.SentMessage] {
            try await offPool { try self.modem.sent() }
        }

        var hookLines: [String] {
            ((try? String(contentsOfFile: hookLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    /// The bpm values of a scenario from `from` to `to` seconds (its `t`).
    static func window(_ scenario: String, from: Int, to: Int) throws -> [Int] {
        let text = try String(contentsOfFile: DaemonFixture.sharedData + "/hr/hr-\(scenario)-1.jsonl", encoding: .utf8)
        let rows = text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return Array(rows[from...to]).map { $0["bpm"] as? Int ?? 0 }
    }

    /// "… (1234.5 ms after the first)": from the first out-of-range sample to the first dispatch.
    static func sinceBreachMs(_ stderr: String, kind: String) -> [Double] {
        stderr.split(separator: "\n").filter { $0.contains("raised: \(kind)") }.compactMap { line in
            guard let range = line.range(of: #"\(([0-9.]+) ms after the first\)"#, options: .regularExpression) else { return nil }
            return Double(line[range].dropFirst().prefix { $0 != " " })
        }
    }

    /// pacerd's "raised" lines: when it confirmed and how long recording and dispatch took, so a
    /// missed deadline says which part was late.
    static func raisedLines(_ stderr: String) -> [Substring] {
        stderr.split(separator: "\n").filter { $0.contains(" raised: ") }
    }

    @Test(.enabled(if: DaemonFixture.hasSharedData))
    func breachesGoOutOnEveryChannelWithinTheDeadlineAndACancelFollows() async throws {
        let world = try await offPool { try World() }
        defer { world.close() }
        try await world.start()

        // tachy: t = 437 is the first sample above 205. Ten seconds before, fifteen after: the
        // strap then stops, more than 10 s after the breach was confirmed (sooner would be strong
        // evidence for hr_signal_lost, a heart that stops after a confirmed breach).
        try await world.play(try Self.window("tachy", from: 427, to: 452))
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { try world.modem.sent().count >= 2 && world.sink.requests().count >= 1 && world.hookLines.count >= 1 }

        let sms = try await world.sentTexts()
        #expect(Set(sms.map(\.number)) == Set(Self.contacts))
        for message in sms {
            #expect(message.text.hasPrefix("SOS: HIGH heart rate"), "\(message.text)")
            #expect(GSM7.fitsOneMessage(message.text), "\(message.text.count): \(message.text)")
            #expect(message.text.contains("Dev pacer-test"))
        }
        let request = try #require(world.sink.requests().first { $0.path == "/v1/alerts" })
        #expect(request.method == "POST")
        #expect(request.path == "/v1/alerts")
        #expect(request.header("Authorization") == "Bearer device-secret")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        #expect(body["kind"] as? String == "hr_high")
        #expect(body["type"] as? String == "alert")
        #expect(body["sequence"] as? Int == 0)
        #expect(body["test"] as? Bool == false)
        #expect((body["heart_rate"] as? [String: Any])?["bpm"] as? Int ?? 0 > 205)
        let alertID = try #require(body["alert_id"] as? String)
        #expect(request.header("Idempotency-Key") == "\(alertID):0")
        #expect(world.hookLines.first?.hasPrefix("alert hr_high 0 {") == true, "\(world.hookLines)")

        // Within 5 s of the first out-of-range sample, as pacerd measured it on its monotonic clock.
        let since = Self.sinceBreachMs(world.daemon.stderr, kind: "hr_high")
        #expect(since.count == 1, "\(world.daemon.stderr)")
        #expect(since.allSatisfy { $0 <= 5000 }, "\(since): \(Self.raisedLines(world.daemon.stderr))")

        // Every delivery acknowledged and recorded.
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) {
            let status = try DaemonFixture.runBlocking(DaemonFixture.binary("pacerctl"), ["sos", "status", "--json", "--socket", world.daemon.socketPath])
            let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            let alerts = json?["alerts"] as? [[String: Any]] ?? []
            let deliveries = alerts.first?["deliveries"] as? [[String: Any]] ?? []
            return deliveries.count == 4 && deliveries.allSatisfy { !($0["acknowledged"] is NSNull) }
        }

        // brady right after: a different kind while hr_high is open is a new alert.
        try await world.play(try Self.window("brady", from: 509, to: 531))
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { try world.modem.sent().contains { $0.text.hasPrefix("SOS: LOW heart rate") } }
        #expect(Self.sinceBreachMs(world.daemon.stderr, kind: "hr_low").allSatisfy { $0 <= 5000 }, "\(Self.raisedLines(world.daemon.stderr))")

        // Cancel: "false alarm, I am OK" to everyone, for both open alerts.
        let cancel = try await world.daemon.ctl("sos", "cancel")
        #expect(cancel.status == 0, "\(cancel.stderr)")
        #expect(cancel.stdout.contains("cancelled 2 alerts"))
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { try world.modem.sent().filter { $0.text.hasPrefix("FALSE ALARM, I am OK") }.count == 4 }
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { world.sink.requests().contains { $0.bodyText.contains("\"type\":\"cancelled\"") } }
        #expect(world.daemon.stderr.contains("said (sos"), "a spoken confirmation")
        #expect(await world.daemon.stop() == .exited(0))
    }

    /// A dead modem and a server answering 503: pending, retried, and across a restart delivered
    /// exactly once each.
    @Test func deliveriesAreRetriedUntilAcknowledgedAcrossARestart() async throws {
        let world = try await offPool { try World(sinkRules: .init(statusSequence: Array(repeating: 503, count: 1000))) }
        defer { world.close() }
        try await offPool { try world.modem.failNextSends(count: 1000) }
        try await world.start()

        let raise = try await world.daemon.ctl("sos", "raise")
        #expect(raise.status == 0, "\(raise.stderr)")
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) {
            let failed = try world.modem.stats().failed
            return world.sink.requests().count >= 2 && failed >= 4
        }
        let status = try await world.daemon.ctl("sos", "status")
        #expect(status.stdout.contains("manual open"), "\(status.stdout)")
        #expect(status.stdout.contains("pending after"), "\(status.stdout)")
        #expect(try await world.sentTexts().isEmpty)
        #expect(await world.daemon.stop() == .exited(0))

        // The network is back; a new pacerd delivers what the old one could not.
        try await offPool { try world.modem.failNextSends(count: 0) }
        world.sink.stop()
        let good = try await offPool { try HTTPSSink(tls: true, rules: .init(), certificates: world.sink.certificates, port: world.sink.port) }
        defer { good.stop() }
        try await world.start()
        // The alert is still open: after it, "device restarted" goes to each target too.
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { try world.modem.sent().count == 4 && good.requests().count == 2 }
        try await Task.sleep(for: .seconds(3))
        let texts = try await world.sentTexts()
        let restarted = texts.filter { $0.text.hasPrefix("SOS update, device restarted") }
        #expect(texts.count == 4 && restarted.count == 2, "each contact texted the alert once and the restart once: \(texts.map(\.text))")
        #expect(Set(restarted.map(\.number)) == Set(Self.contacts))
        #expect(good.requests().count == 2)
        #expect(good.requests().map(\.bodyText).filter { $0.contains("\"type\":\"alert\"") }.count == 1)
        #expect(world.daemon.stderr.contains("recorded before the restart are not acknowledged yet"))
        #expect(await world.daemon.stop() == .exited(0))
    }

    /// A server refusing alerts (401: a bad token) is shown by `pacerctl sos` and `pacerctl status`,
    /// and the alert is still retried.
    @Test func aServerThatRejectsAlertsIsShownAndStillRetried() async throws {
        let world = try await offPool { try World(sinkRules: .init(statusSequence: Array(repeating: 401, count: 1000))) }
        defer { world.close() }
        try await world.start()
        let look = try await world.daemon.ctl("sos")
        #expect(!look.stdout.contains("server rejects"), "\(look.stdout)")

        #expect(try await world.daemon.ctl("sos", "raise").status == 0)
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { world.sink.requests().filter { $0.path == "/v1/alerts" }.count >= 3 }
        let sos = try await world.daemon.ctl("sos")
        #expect(sos.stdout.contains("server rejects alerts: 401 (still retried)"), "\(sos.stdout)")
        let status = try await world.daemon.ctl("status")
        #expect(status.stdout.contains("SOS: server rejects alerts: 401"), "\(status.stdout)")
        #expect(await world.daemon.stop() == .exited(0))
    }

    /// A run records, the runner stands still and the strap falls silent: a warning at once, and
    /// "Are you OK?" once both have lasted `no_signal_no_motion_s`. Answered (`pacerctl sos
    /// cancel`), nothing goes out. The strap is heard again, then falls silent once more:
    /// asked again, and unanswered, "man down" goes out with the position.
    /// #30: a heart that stops outside any run (no `run start`: monitoring is continuous). The
    /// wearer stands (gpsfake plays standstill-1), the strap reads a steep fall and falls silent:
    /// `hr_signal_lost` goes out at once, no question, through the simulated ModemManager on the
    /// bus, the HTTPS sink and the hook.
    @Test(.enabled(if: DaemonFixture.hasSharedData), .timeLimit(.minutes(10)))
    func anArrestOutsideAnyRunIsRaisedOnEveryChannel() async throws {
        let fake = try GPSFake(log: DaemonFixture.sharedData + "/sim/standstill-1.nmea", options: .init(cycle: 0.33, holdUntilReleased: true))
        try await fake.start()
        let world = try await offPool { try World(gpsPort: fake.port) }
        defer { world.close() }
        try await world.start()
        fake.release()
        try await world.daemon.waitForStatus { ($0["gps"] as? String)?.hasSuffix("d_fix") == true }
        // Some fixes, so the body is seen standing.
        try await world.play(Array(repeating: 64, count: 8))
        #expect(try await world.daemon.status()["state"] as? String == "idle", "no run records")
        try await world.play([62, 56, 50, 45, 41])
        let silent = ContinuousClock.now
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { try world.modem.sent().count >= SOSTests.contacts.count }
        let after = ContinuousClock.now - silent
        // Silent 4.5 s after the last notification (at 1 Hz), then recorded and dispatched.
        #expect(after <= .seconds(8), "texted \(after) after the last notification")
        #expect(!world.daemon.stderr.contains("Are you OK?"), "strong evidence, a body standing: no question")
        let request = try #require(world.sink.requests().first { $0.path == "/v1/alerts" })
        let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        #expect(body["kind"] as? String == "hr_signal_lost")
        #expect(body["run_id"] == nil, "no run")
        #expect(body["position"] is [String: Any], "where: the standing position")
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { world.hookLines.contains { $0.hasPrefix("alert hr_signal_lost 0 ") } }
        #expect(await world.daemon.stop() == .exited(0))
    }

    /// The signal and the movement stop together (standing, the strap silent): asked at once;
    /// answered, nothing; asked again at the next silence and, unanswered, raised.
    @Test(.enabled(if: DaemonFixture.hasSharedData), .timeLimit(.minutes(10)))
    func signalAndMotionLostTogetherIsAskedThenManDown() async throws {
        let fake = try GPSFake(log: DaemonFixture.sharedData + "/sim/standstill-1.nmea", options: .init(cycle: 0.33, holdUntilReleased: true))
        try await fake.start()
        let world = try await offPool { try World(gpsPort: fake.port, extraSOS: "collapse_ask_s = 10") }
        defer { world.close() }
        try await world.start()
        #expect(try await world.daemon.ctl("run", "start").status == 0)
        fake.release()
        try await world.daemon.waitForStatus { $0["state"] as? String == "recording" }
        try await world.play(Array(repeating: 72, count: 4))
        let asked = "Are you OK?"
        try await waitOffPool(timeout: .seconds(40), every: .milliseconds(50)) { world.daemon.stderr.contains(asked) }
        // Asked when the strap is silent (4.5 s), before the sensor fault's 5 s warning; the
        // "check your strap" warning is for a runner who keeps moving.
        #expect(!world.daemon.stderr.contains("check your heart-rate strap"), "standing: a question, not the strap warning")
        let answer = try await world.daemon.ctl("sos", "cancel")
        #expect(answer.status == 0, "\(answer.stderr)")
        #expect(answer.stdout.contains("answered"), "\(answer.stdout)")
        try await Task.sleep(for: .seconds(13))
        #expect(try world.modem.sent().isEmpty, "an answered question raises nothing")
        #expect(world.daemon.stderr.contains("answered; no help called"))

        try await world.play(Array(repeating: 72, count: 4))
        let silent = ContinuousClock.now
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(50)) { try world.modem.sent().count >= 2 }
        let after = ContinuousClock.now - silent
        #expect(after >= .seconds(14), "raised \(after) after the last notification: 4.5 s of silence, then 10 s unanswered")
        #expect(world.daemon.stderr.components(separatedBy: asked).count - 1 >= 2, "asked again before raising")
        let sms = try await world.sentTexts()
        #expect(sms.allSatisfy { $0.text.hasPrefix("SOS: no heart-rate signal and no movement") }, "\(sms.map(\.text))")
        #expect(sms.allSatisfy { $0.text.contains("https://osm.org/?mlat=") }, "with the position")
        let request = try #require(world.sink.requests().first { $0.path == "/v1/alerts" })
        let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        #expect(body["kind"] as? String == "no_signal_no_motion")
        #expect(body["position"] is [String: Any])
        #expect(await world.daemon.stop() == .exited(0))
    }

    /// `pacerctl sos test` proves every channel, marked as a test; `pacerctl sos` alone raises nothing.
    @Test func theTestGoesThroughEveryChannelAndSOSAloneRaisesNothing() async throws {
        let world = try await offPool { try World() }
        defer { world.close() }
        try await world.start()

        let look = try await world.daemon.ctl("sos")
        #expect(look.status == 0, "\(look.stderr)")
        #expect(look.stdout.contains("monitoring: on"))
        #expect(look.stdout.contains("open alerts: none"))
        try await Task.sleep(for: .seconds(1))
        #expect(try await world.sentTexts().isEmpty)
        #expect(world.sink.requests().isEmpty)

        let test = try await world.daemon.ctl("sos", "test", "--wait", "20")
        #expect(test.status == 0, "\(test.stdout)\n\(test.stderr)")
        #expect(test.stdout.contains("every channel acknowledged the test"))
        let sms = try await world.sentTexts()
        #expect(sms.count == 2)
        #expect(sms.allSatisfy { $0.text.hasPrefix("TEST only, please ignore") })
        let first = try #require(world.sink.requests().first { $0.path == "/v1/alerts" })
        let body = try #require(try JSONSerialization.jsonObject(with: Data(first.body)) as? [String: Any])
        #expect(body["test"] as? Bool == true)
        #expect(body["kind"] as? String == "test")
        #expect(world.hookLines.first?.hasPrefix("alert test 0 ") == true)
        #expect(await world.daemon.stop() == .exited(0))
    }

    /// Every text asks for a status report. `pacerctl sos` (and sos.status) shows "delivered" when
    /// the report says so, "not delivered: <reason>" for a permanent error, and "sent" while none
    /// came; a text without a report is never sent again, and nothing else waits for it.
    @Test func textsAskForAStatusReportAndStatusShowsWhatItSays() async throws {
        let world = try await offPool { try World(modem: .init(sendDelay: 0.3, reportDelay: 0.5)) }
        defer { world.close() }
        try await world.start()

        /// `sos test`, then the statuses of its two texts in `pacerctl sos --json` once `done` holds.
        func test(until done: @escaping @Sendable ([String]) -> Bool) async throws -> (id: String, statuses: [String], text: String) {
            let test = try await world.daemon.ctl("sos", "test", "--wait", "20")
            #expect(test.status == 0, "\(test.stdout)\n\(test.stderr)")
            let id = try #require(test.stdout.split(separator: " ").dropFirst(2).first.map(String.init))
            try await waitOffPool(timeout: .seconds(20), every: .milliseconds(100)) {
                done(try Self.smsStatuses(socket: world.daemon.socketPath, alert: id))
            }
            let statuses = try await offPool { try Self.smsStatuses(socket: world.daemon.socketPath, alert: id) }
            return (id, statuses, try await world.daemon.ctl("sos").stdout)
        }

        let delivered = try await test { $0.count == 2 && $0.allSatisfy { $0 == "delivered" } }
        #expect(delivered.text.contains(", delivered 20"), "with the time the report came: \(delivered.text)")
        #expect(try world.modem.stats().reports == 2)
        #expect(world.daemon.stderr.contains("to sms …567: delivered"), "journalled, the number redacted")

        try await offPool { try world.modem.setDeliveryReports(delay: 0.3, state: 0x43) }
        let failed = try await test { $0.count == 2 && $0.allSatisfy { $0.hasPrefix("not delivered") } }
        #expect(failed.statuses == ["not delivered: error-not-obtainable", "not delivered: error-not-obtainable"])
        #expect(failed.text.contains("not delivered: error-not-obtainable"), "\(failed.text)")

        try await offPool { try world.modem.setDeliveryReports(delay: nil) }
        let silent = try await test { $0.count == 2 && $0.allSatisfy { $0 == "sent" } }
        try await Task.sleep(for: .seconds(4))
        #expect(try Self.smsStatuses(socket: world.daemon.socketPath, alert: silent.id) == ["sent", "sent"])
        // Acknowledged at SENT: no report is no reason to send again (retry_max_s is 2 s here).
        let texts = try await world.sentTexts()
        #expect(texts.count == 6, "three tests to two contacts, each text once: \(texts.map(\.number))")
        #expect(try world.modem.stats().reports == 4)
        #expect(await world.daemon.stop() == .exited(0))
    }

    /// The `status` of each SMS delivery of `alert` in `pacerctl sos --json`.
    static func smsStatuses(socket: String, alert: String) throws -> [String] {
        let result = try DaemonFixture.runBlocking(DaemonFixture.binary("pacerctl"), ["sos", "status", "--json", "--socket", socket])
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let alerts = object["alerts"] as? [[String: Any]],
              let deliveries = alerts.first(where: { $0["alert_id"] as? String == alert })?["deliveries"] as? [[String: Any]] else { return [] }
        return deliveries.filter { $0["channel"] as? String == "sms" }.compactMap { $0["status"] as? String }
    }
}
