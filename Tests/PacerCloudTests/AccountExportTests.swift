@testable import CloudModel
import Foundation
import Gzip
import HTTPTypes
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// The account's export (#33): one ZIP that Python's zipfile reads with every CRC right, every
/// activity as FIT (fitdecode) and GPX (gpxpy) with all its points, and account.json with the
/// account's own data and nothing of another's.
@Suite("pacer-cloud: exporting the whole account", .timeLimit(.minutes(10)))
struct AccountExportTests {
    /// What independent readers find in the archive at `path`: names, CRC check, account.json,
    /// each GPX file's points and each FIT file's records.
    static let reader = """
        import json, sys, zipfile, io
        import fitdecode, gpxpy
        z = zipfile.ZipFile(sys.argv[1])
        out = {"names": z.namelist(), "bad": z.testzip(), "gpx": {}, "fit": {}}
        for name in z.namelist():
            data = z.read(name)
            if name == "account.json": out["account"] = json.loads(data)
            elif name.endswith(".gpx"): out["gpx"][name] = sum(len(s.points) for t in gpxpy.parse(data.decode()).tracks for s in t.segments)
            elif name.endswith(".fit"):
                with fitdecode.FitReader(io.BytesIO(data), check_crc=fitdecode.CrcCheck.ENABLED) as fit:
                    out["fit"][name] = sum(1 for f in fit if isinstance(f, fitdecode.FitDataMessage) and f.name == "record")
        print(json.dumps(out))
        """

    static func read(_ bytes: [UInt8]) async throws -> [String: Any] {
        let directory = try TemporaryDirectory(prefix: "pacer-export")
        let path = directory.file("export.zip")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let result = try await offPool { try BlockingCommand.run("/usr/bin/env", ["python3", "-c", reader, path], timeout: .seconds(60)) }
        try result.check()
        return try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    @Test("one export per account at a time, until its body is done with, however that ends")
    func oneAtATime() throws {
        let gate = AccountExportController.ExportsInProgress()
        do {
            let first = try #require(gate.begin("ann"))
            withExtendedLifetime(first) {
                #expect(gate.begin("ann") == nil, "a second export of Ann's waits")
                #expect(gate.begin("bob") != nil, "Bob's is his own")
            }
        }
        #expect(gate.begin("ann") != nil, "the first one's body gone, Ann may export again")
    }

    @Test("a ZIP that zipfile reads: empty, small and a megabyte of noise, UTF-8 names, every CRC right")
    func zipWriter() async throws {
        let zip = ZipWriter(year: 2026, month: 11, day: 28, hour: 14, minute: 5, second: 7)
        var archive: [UInt8] = []
        var generator = SplitMix64(state: 7)
        let noise = (0..<1_048_576).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        archive += try zip.add("empty.txt", [])
        archive += try zip.begin("città/😀.txt")
        for _ in 0..<100 { archive += try zip.write(Array("one line of text, again and again\n".utf8)) }
        archive += try zip.end()
        archive += try zip.add("noise.bin", noise)
        archive += try zip.finish()
        #expect(zip.byteCount == UInt64(archive.count))
        let directory = try TemporaryDirectory(prefix: "pacer-zip")
        let path = directory.file("test.zip")
        try Data(archive).write(to: URL(fileURLWithPath: path))
        let script = """
            import sys, zipfile, hashlib, json
            z = zipfile.ZipFile(sys.argv[1])
            print(json.dumps({"bad": z.testzip(), "names": z.namelist(), "sizes": [len(z.read(n)) for n in z.namelist()],
                              "noise": hashlib.sha256(z.read("noise.bin")).hexdigest()}))
            """
        let result = try await offPool { try BlockingCommand.run("/usr/bin/env", ["python3", "-c", script, path]) }
        try result.check()
        let read = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(read["bad"] is NSNull)
        #expect(read["names"] as? [String] == ["empty.txt", "città/😀.txt", "noise.bin"])
        #expect(read["sizes"] as? [Int] == [0, 3_400, 1_048_576])
        #expect(read["noise"] as? String == Tokens.digest(noise))
        // An entry must be ended before the next, and the archive before it is finished.
        let open = ZipWriter(year: 2026, month: 1, day: 1, hour: 0, minute: 0, second: 0)
        _ = try open.begin("a")
        #expect(throws: ZipWriter.Failure.self) { try open.begin("b") }
        #expect(throws: ZipWriter.Failure.self) { try open.finish() }
    }

    @Test("every activity as FIT and GPX with all its points, account.json with the account's own data; another account's export has none of it",
          arguments: Backend.allCases)
    func export(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (token, account) = try await RunnerPageTests.runner(cloud, browser)
            let long = RunnerPageTests.run(meters: 5_000)  // 1,501 samples: four chunks
            let first = try await RunnerPageTests.upload(cloud, token: token, long)
            let second = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 1_000, startMs: Track.start + 86_400_000))
            #expect(try await browser.post("/runs/\(first)/edit", ["title": "Città loop", "notes": "Hot.", "sport": "run", "visibility": "monitors"])
                .status == .seeOther)
            #expect(try await browser.post("/shoes", ["name": "Blue trainers", "start_km": "10"]).status == .seeOther)
            #expect(try await browser.post("/goals", ["distance_km": "25", "period": "week"], formPage: "/stats").status == .seeOther)

            let answer = try await browser.get("/account/export")
            #expect(answer.status == .ok && answer.headers[.contentType] == "application/zip")
            #expect(answer.headers[.contentDisposition]?.hasPrefix("attachment; filename=\"pacer-export-") == true)
            let read = try await Self.read(Array(answer.body.readableBytesView))
            #expect(read["bad"] is NSNull, "every CRC is right")
            let names = try #require(read["names"] as? [String])
            let firstBase = "activities/2026-05-10-\(first.prefix(8))", secondBase = "activities/2026-05-11-\(second.prefix(8))"
            #expect(Set(names) == [firstBase + ".fit", firstBase + ".gpx", secondBase + ".fit", secondBase + ".gpx", "account.json", "README.txt"])
            #expect((read["gpx"] as? [String: Int])?[firstBase + ".gpx"] == long.count, "every point of the run")
            #expect((read["fit"] as? [String: Int])?[firstBase + ".fit"] == long.count)
            let data = try #require(read["account"] as? [String: Any])
            #expect((data["account"] as? [String: Any])?["email"] as? String == account.email)
            #expect((data["devices"] as? [[String: Any]])?.map { $0["name"] as? String } == ["ann-pacer"])
            #expect((data["shoes"] as? [[String: Any]])?.first?["name"] as? String == "Blue trainers")
            #expect((data["goals"] as? [[String: Any]])?.first?["distance_m"] as? Double == 25_000)
            let activities = try #require(data["activities"] as? [[String: Any]])
            #expect(activities.map { $0["run_id"] as? String } == [second, first], "newest first")
            let named = try #require(activities.last)
            #expect(named["title"] as? String == "Città loop" && named["notes"] as? String == "Hot." && named["visibility"] as? String == "monitors")
            #expect((named["summary"] as? [String: Any])?["distance_m"] as? Double == 5_000)
            #expect(data["activities_without_files"] == nil)

            // Bob's export: his account only.
            let bob = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, bob, email: "bob@example.org", device: "bob-pacer")
            let bobs = try await Self.read(Array(try await bob.get("/account/export").body.readableBytesView))
            #expect(Set(bobs["names"] as? [String] ?? []) == ["account.json", "README.txt"])
            let bobData = try #require(bobs["account"] as? [String: Any])
            let text = String(decoding: try JSONSerialization.data(withJSONObject: bobData), as: UTF8.self)
            #expect(!text.contains("ann@example.org") && !text.contains(first) && !text.contains("Blue trainers"))
            // Signed out: the way to log in.
            #expect(try await Browser(cloud).get("/account/export").status == .unauthorized)
        }
    }
}
