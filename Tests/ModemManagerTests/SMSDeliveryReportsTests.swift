import Foundation
import ModemManager
import PacerTestSupport
import Synchronization
import Systemd
import Testing

/// Status reports against the simulated ModemManager, which exports them as ModemManager 1.20
/// does: a received message of their own (PduType STATUS_REPORT) announced by Messaging.Added.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct SMSDeliveryReportsTests {
    static let number = "+393331234567"

    static func open(_ sim: ModemManagerSimulator) -> @Sendable () throws(BusError) -> BusConnection {
        let address = sim.address
        return { () throws(BusError) in try BusConnection.connect(address: address) }
    }

    /// Every report a watch was handed, in order.
    final class Heard: Sendable {
        private let reports = Mutex<[SMSStatusReport]>([])
        var all: [SMSStatusReport] { reports.withLock { $0 } }
        func add(_ report: SMSStatusReport) { reports.withLock { $0.append(report) } }
    }

    /// Sends with a report requested, and watches for it.
    static func sendAndWatch(_ sim: ModemManagerSimulator, _ reports: SMSDeliveryReports, for duration: Duration = .seconds(60),
                             to number: String = number) async throws -> (SMSReceipt, Heard) {
        try await reports.listen()
        let receipt = try await SMSSender(openBus: open(sim)).send(text: "SOS test", to: number, timeout: .seconds(10), deliveryReport: true)
        let heard = Heard()
        reports.watch(receipt, for: duration) { heard.add($0) }
        return (receipt, heard)
    }

    @Test func theReportOfADeliveredTextIsHeardAndThenDeleted() async throws {
        let sim = try await offPool { try ModemManagerSimulator(.init(reportDelay: 0.3)) }
        defer { sim.close() }
        let reports = SMSDeliveryReports(openBus: Self.open(sim))
        let (receipt, heard) = try await Self.sendAndWatch(sim, reports)
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { !heard.all.isEmpty }
        let report = try #require(heard.all.first)
        #expect(report.state == .completedReceived && report.state.outcome == .delivered)
        #expect(report.reference == receipt.reference && report.number == Self.number)
        #expect(report.path != receipt.message, "a report is a message of its own")
        #expect(!report.dischargeTimestamp.isEmpty)
        // Final: the watch ends, and the report leaves the modem's storage.
        #expect(reports.watchCount == 0)
        try await waitOffPool(timeout: .seconds(5), every: .milliseconds(50)) { try sim.stats().messages == 0 }
        let stats = try await offPool { try sim.stats() }
        #expect(stats.reports == 1 && stats.sent == 1 && stats.deleted == 2)
    }

    @Test func aPermanentErrorIsReportedAsNotDelivered() async throws {
        let sim = try await offPool { try ModemManagerSimulator(.init(reportDelay: 0.2, reportState: 0x43)) }
        defer { sim.close() }
        let reports = SMSDeliveryReports(openBus: Self.open(sim))
        let (_, heard) = try await Self.sendAndWatch(sim, reports)
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { !heard.all.isEmpty }
        let state = try #require(heard.all.first?.state)
        #expect(state.outcome == .notDelivered && state.isFinal)
        #expect(state.description == "error-not-obtainable")
        #expect(reports.watchCount == 0)
    }

    /// A temporary error is not the last word: the watch goes on and hears the next report.
    @Test func aTemporaryErrorKeepsTheWatch() async throws {
        let sim = try await offPool { try ModemManagerSimulator(.init(reportDelay: 0.2, reportState: 0x21)) }
        defer { sim.close() }
        let reports = SMSDeliveryReports(openBus: Self.open(sim))
        let (_, heard) = try await Self.sendAndWatch(sim, reports)
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { !heard.all.isEmpty }
        #expect(heard.all.first?.state.outcome == .stillTrying)
        #expect(reports.watchCount == 1)
    }

    /// Not asked, no report: the simulator honours delivery-report-request as a network does.
    @Test func noReportIsSentForATextThatDidNotAskForOne() async throws {
        let sim = try await offPool { try ModemManagerSimulator(.init(reportDelay: 0.1)) }
        defer { sim.close() }
        _ = try await SMSSender(openBus: Self.open(sim)).send(text: "no report", to: Self.number, timeout: .seconds(10))
        try await Task.sleep(for: .seconds(1))
        #expect(try await offPool { try sim.stats().reports } == 0)
    }

    /// No report ever comes: the watch ends when its time is up and, nothing else being
    /// watched, the connection closes. Nothing is left behind.
    @Test func aWatchWithoutReportEndsAndLeavesNothing() async throws {
        let sim = try await offPool { try ModemManagerSimulator(.init(reportDelay: nil)) }
        defer { sim.close() }
        let reports = SMSDeliveryReports(openBus: Self.open(sim), idleKept: .seconds(1))
        let (_, heard) = try await Self.sendAndWatch(sim, reports, for: .seconds(1))
        #expect(reports.watchCount == 1)
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { reports.watchCount == 0 && !reports.isListening }
        #expect(heard.all.isEmpty)
    }

    /// The connection closed while the text was on its way (idle for longer than allowed): the
    /// watch connects again at once and still hears the report.
    @Test func aWatchWithoutAConnectionConnectsAgain() async throws {
        let sim = try await offPool { try ModemManagerSimulator(.init(sendDelay: 0.8, reportDelay: 0.5)) }
        defer { sim.close() }
        let reports = SMSDeliveryReports(openBus: Self.open(sim), idleKept: .milliseconds(100))
        let (receipt, heard) = try await Self.sendAndWatch(sim, reports)
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { !heard.all.isEmpty }
        #expect(heard.all.map(\.reference) == [receipt.reference])
    }

    /// The report came while nobody listened (the connection had closed, idle, before the text
    /// was sent): after the watch connects again it reads the modem's stored messages and finds it.
    @Test func aReportThatCameWhileNobodyListenedIsReadFromTheModem() async throws {
        let sim = try await offPool { try ModemManagerSimulator(.init(sendDelay: 0.5, reportDelay: 0.0)) }
        defer { sim.close() }
        let reports = SMSDeliveryReports(openBus: Self.open(sim), idleKept: .milliseconds(100))
        try await reports.listen()
        let receipt = try await SMSSender(openBus: Self.open(sim)).send(text: "SOS test", to: Self.number, timeout: .seconds(10), deliveryReport: true)
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(20)) { try sim.stats().reports == 1 }
        try await waitOffPool(timeout: .seconds(5), every: .milliseconds(20)) { !reports.isListening }
        let heard = Heard()
        reports.watch(receipt, for: .seconds(60)) { heard.add($0) }
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { !heard.all.isEmpty }
        #expect(heard.all.map(\.reference) == [receipt.reference])
        // Read, then deleted from the modem as a heard report is.
        try await waitOffPool(timeout: .seconds(5), every: .milliseconds(50)) { try sim.stats().messages == 0 }
    }

    /// The modem goes before the report (unplugged), then ModemManager restarts: nothing hangs,
    /// and a text sent afterwards is still heard on the same watcher.
    @Test func aModemThatGoesOrAModemManagerThatRestartsHangsNothing() async throws {
        // Reports come 3 s after SENT: the modem goes well before (busctl is slow on a loaded machine).
        let sim = try await offPool { try ModemManagerSimulator(.init(reportDelay: 3.0)) }
        defer { sim.close() }
        let reports = SMSDeliveryReports(openBus: Self.open(sim))
        let (_, lost) = try await Self.sendAndWatch(sim, reports, for: .seconds(5))
        _ = try await offPool { try sim.removeModem() }
        try await Task.sleep(for: .seconds(3.5))
        #expect(lost.all.isEmpty, "the modem went before the report")
        #expect(try await offPool { try sim.stats().reports } == 0)

        try await offPool { try sim.restart() }
        let (receipt, heard) = try await Self.sendAndWatch(sim, reports)
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { !heard.all.isEmpty }
        #expect(heard.all.map(\.reference) == [receipt.reference])
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { reports.watchCount == 0 }
    }

    /// A report that comes before its watch (the network quicker than Send's answer) is kept
    /// briefly and handed over when the watch starts.
    @Test func aReportBeforeItsWatchIsNotLost() async throws {
        let sim = try await offPool { try ModemManagerSimulator(.init(reportDelay: 0.0)) }
        defer { sim.close() }
        let reports = SMSDeliveryReports(openBus: Self.open(sim))
        try await reports.listen()
        let receipt = try await SMSSender(openBus: Self.open(sim)).send(text: "quick", to: Self.number, timeout: .seconds(10), deliveryReport: true)
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(20)) { try sim.stats().reports == 1 }
        // Time for the watcher to read it (GetAll) and keep it: on a loaded machine it may still
        // be reading, and then it meets the watch the ordinary way; either way it is not lost.
        try await Task.sleep(for: .milliseconds(300))
        let heard = Heard()
        reports.watch(receipt, for: .seconds(60)) { heard.add($0) }
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(20)) { !heard.all.isEmpty }
        #expect(heard.all.map(\.reference) == [receipt.reference])
        #expect(reports.watchCount == 0)
    }

    @Test func numbersMatchWrittenNationallyOrInternationally() {
        let report = SMSStatusReport(state: .completedReceived, number: "3331234567", reference: 7, dischargeTimestamp: "", path: "/x")
        #expect(report.isAbout(reference: 7, number: "+39 333 123 4567"))
        #expect(!report.isAbout(reference: 8, number: "+393331234567"))
        #expect(!report.isAbout(reference: 7, number: "+393339999999"))
    }
}
