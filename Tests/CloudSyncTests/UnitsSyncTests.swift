@testable import CloudSync
import Foundation
import HTTPClient
import PacerConfig
import PacerContract
import PacerTestSupport
import Testing

/// The account's units on the device (#33): the sync's profile says "km" or "mi"; the pipeline
/// hears them at start (from the last sync, offline too) and on each change, and the
/// configuration then speaks them: splits, the coach's words and its summaries' spacing.
@Suite(.timeLimit(.minutes(10))) struct UnitsSyncTests {
    final class Heard: @unchecked Sendable {
        var units: [String?] = []
        var log: [String] = []
    }

    static func loop(_ directory: TemporaryDirectory, _ cloud: ScriptedCloud, _ heard: Heard) -> SyncLoop {
        let engine = SyncEngine(settings: SyncLoopTests.settings, storePath: directory.file("pacer.db"),
                                transport: { request throws(HTTPClientError) in try cloud.perform(request) },
                                log: { _, message in heard.log.append(message) }, onUnits: { heard.units.append($0) })
        return SyncLoop(engine: engine, state: { nil }, say: { _ in .noVoice }, log: { _, _ in })
    }

    @Test func theAccountsUnitsReachThePipelineAtStartAndOnEachChangeOnly() throws {
        let directory = try TemporaryDirectory(prefix: "pacer-units")
        let cloud = ScriptedCloud()
        let heard = Heard()
        var loop = Self.loop(directory, cloud, heard)
        #expect(heard.units == [nil], "no sync yet: none known")
        cloud.units = "km"
        loop.perform(.fetch, at: 0)
        #expect(heard.units == [nil, "km"])
        loop.perform(.fetch, at: 100 * SyncLoopTests.second)
        #expect(heard.units == [nil, "km"], "unchanged: nothing new")
        cloud.units = "mi"
        loop.perform(.fetch, at: 200 * SyncLoopTests.second)
        #expect(heard.units == [nil, "km", "mi"])
        #expect(heard.log.contains { $0.contains("the account reads miles") }, "\(heard.log)")

        // Restarted offline: the last sync's units, at once.
        cloud.online = false
        let offline = Heard()
        _ = Self.loop(directory, cloud, offline)
        #expect(offline.units == ["mi"])
    }

    @Test func theConfigurationFollowsTheAccountsUnits() throws {
        let metric = try PacerConfiguration.parse("[voice]\nsummary_every_km = 2\n", file: "pacer.toml")
        let miles = metric.following(accountUnits: "mi")
        #expect(miles.units == .imperial && miles.coach.units == .imperial)
        #expect(miles.tracking.splitDistanceMeters == 1609.344)
        #expect(miles.coach.summaryEveryMeters == 2 * 1609.344, "two of the account's units")
        // Back to kilometres: exactly the file's configuration again.
        #expect(miles.following(accountUnits: "km") == metric)
        // No account, or a value this version does not know: the file's own.
        #expect(metric.following(accountUnits: nil) == metric)
        #expect(metric.following(accountUnits: "furlongs") == metric)

        // A split length the file sets stays; only the words and summaries follow.
        let ownSplits = try PacerConfiguration.parse("[units]\nsystem = \"imperial\"\n[tracking]\nsplit_distance_m = 400\n", file: "pacer.toml")
        let kilometres = ownSplits.following(accountUnits: "km")
        #expect(kilometres.units == .metric && kilometres.tracking.splitDistanceMeters == 400 && kilometres.coach.summaryEveryMeters == 1000)
    }
}
