@testable import CloudModel
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerCore
import PacerTestSupport
import Testing

/// Imports that keep what the file says, and runs that cannot be right kept but not believed
/// (#33): the import set of `tools/import-set` (files written by fit-tool and by hand, each
/// showing one thing), its distances against independent readers (fitdecode, gpxpy,
/// python-tcxparser), sports, segments, gaps, glitches, files without GPS, one activity in
/// several files, several files and a zip in one form; and a device's run whose samples carry no
/// elapsed time, marked and kept out of the records.
@Suite("pacer-cloud: imports keep what the file says; runs that cannot be right are not believed", .timeLimit(.minutes(10)))
struct ImportSetTests {
    /// The import set written into a fresh directory, and what the independent readers read in it.
    static func importSet() async throws -> (directory: TemporaryDirectory, readers: [String: [[String: Any]]]) {
        let directory = try TemporaryDirectory(prefix: "pacer-import-set")
        let tool = FileTests.repositoryRoot + "/tools/import-set"
        let written = try await FileTests.runVerifier([tool, "write", directory.path])
        try #require(written.status == 0, "\(written.output) (tools/setup installs fit-tool)")
        let read = try await offPool { try DaemonFixture.runBlocking("/usr/bin/env", ["python3", tool, "read", directory.path]) }
        try #require(read.status == 0, "\(read.stderr)")
        let readers = try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as! [String: [[String: Any]]]
        return (directory, readers)
    }

    static func bytes(_ directory: TemporaryDirectory, _ name: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file(name))))
    }

    /// Several files in one multipart form, as a browser sends `<input type=file multiple>`.
    static func upload(_ cloud: Cloud, _ browser: Browser, csrf: String, _ files: [(name: String, bytes: [UInt8])]) async throws -> TestResponse {
        let boundary = "----pacer-test-\(UUID().uuidString)"
        var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(csrf)\r\n".utf8)
        for file in files {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(file.name)\"\r\n".utf8)
            body += Array("Content-Type: application/octet-stream\r\n\r\n".utf8) + file.bytes + Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        var headers: HTTPFields = [.contentType: "multipart/form-data; boundary=\(boundary)"]
        headers[.cookie] = browser.cookieHeader
        return try await cloud.client.execute(uri: "/import", method: .post, headers: headers, body: ByteBuffer(bytes: body))
    }

    /// The account's imported activities, newest first, with their summaries.
    static func imported(_ cloud: Cloud, email: String) async throws -> [(run: AccountRun, summary: RunSummaryBody)] {
        let account = try #require(try await cloud.store.accounts.account(email: email)).account
        return try await cloud.store.runs.accountRuns(accountID: account.id, fromMs: nil, toMs: nil, limit: 100, offset: 0).map {
            ($0, try JSONDecoder().decode(RunSummaryBody.self, from: Data($0.summary.json.utf8)))
        }
    }

    @Test("the import set: each file's distance within 1 % of an independent reader's, its sport, segments, gaps, glitches and totals; records from believed runs only",
          arguments: Backend.allCases)
    func importSet(backend: Backend) async throws {
        let (directory, readers) = try await Self.importSet()
        let distances: [String: [Double]] = readers.mapValues { $0.map { $0["distance"] as! Double } }
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            func readerDistance(_ name: String, _ index: Int = 0) -> Double { distances[name]![index] }
            let (ann, csrf) = try await FileTests.signedIn(cloud, "ann@example.org")
            var messages: [String: String] = [:]
            for name in ["segments.gpx", "gap.gpx", "glitch.gpx", "fast.gpx", "ride.fit", "multisport.fit", "treadmill.fit", "hr-only.tcx",
                         "same.fit", "one-time.fit"] {
                let response = try await FileTests.upload(cloud, ann, csrf: csrf, fileName: name, try Self.bytes(directory, name))
                #expect(response.status == .created, "\(name): \(response.text.prefix(600))")
                messages[name] = response.text
            }
            let all = try await Self.imported(cloud, email: "ann@example.org")
            #expect(all.count == 13, "\(all.map(\.summary.distance_m))")
            func activity(_ title: String?, sport: Sport, startMs: Int64 = Track.start) -> (run: AccountRun, summary: RunSummaryBody)? {
                all.first { $0.run.activity.sport == sport && $0.run.summary.startMs == startMs && (title == nil || $0.run.activity.title == title) }
            }
            var table: [String] = []
            func check(_ name: String, _ found: (run: AccountRun, summary: RunSummaryBody)?, reader: Double, sourceLine: SourceLocation = #_sourceLocation) {
                guard let found else { Issue.record("\(name): not imported", sourceLocation: sourceLine); return }
                let off = abs(found.summary.distance_m - reader) / max(reader, 1)
                #expect(off <= 0.01, "\(name): \(found.summary.distance_m) m, the reader \(reader) m", sourceLocation: sourceLine)
                table.append("\(name) | \(found.run.activity.sport.rawValue) | \(String(format: "%.1f", found.summary.distance_m)) | "
                             + "\(String(format: "%.1f", reader)) | \(String(format: "%.2f", off * 100)) %")
            }
            // Tracks and segments apart: 2.6 km, not the 7 km straight lines across the gaps would make.
            let walk = activity("Evening walk", sport: .walk)
            check("segments.gpx", walk, reader: readerDistance("segments.gpx"))
            // Moving time: the segments' own (860 + 570 + 430 s), not the 50 minutes between them.
            #expect(abs((walk?.summary.moving_time_s ?? 0) - 1_860) <= 15, "\(String(describing: walk?.summary))")
            #expect(abs((walk?.summary.elapsed_time_s ?? 0) - Double(1_860 + 50 * 60)) < 0.5)
            // Its name is kept, and exported again.
            let export = try await ann.get("/runs/\(walk?.run.summary.runID ?? "")/export.gpx")
            #expect(export.status == .ok && export.text.contains("Evening walk"))
            // A 15-minute recording gap in one segment is a pause: 2,400 s moving, not 3,300.
            let gap = activity("Run with a pause", sport: .run)
            check("gap.gpx", gap, reader: readerDistance("gap.gpx"))
            #expect(abs((gap?.summary.moving_time_s ?? 0) - 2_400) <= 10, "\(String(describing: gap?.summary))")
            // Glitches dropped, and said: the distance is the clean twin's.
            check("glitch.gpx (clean twin)", activity("Glitches", sport: .run), reader: readerDistance("glitch.clean.gpx"))
            #expect(messages["glitch.gpx"]!.contains("left out: 1 point out of time order"), "\(messages["glitch.gpx"]!)")
            #expect(messages["glitch.gpx"]!.contains("2 points reached at a speed no one of that sport reaches"))
            // Sports from the file; a multisport file is one activity per session, each starting at its session's start.
            check("ride.fit", activity(nil, sport: .ride), reader: readerDistance("ride.fit"))
            // Exported again as what it is: a ride, in every format.
            let rideID = activity(nil, sport: .ride)?.run.summary.runID ?? ""
            #expect(try await ann.get("/runs/\(rideID)/export.gpx").text.contains("<type>cycling</type>"))
            #expect(try await ann.get("/runs/\(rideID)/export.tcx").text.contains(#"<Activity Sport="Biking">"#))
            // Its page and the list read a speed, not a pace.
            #expect(try await ann.get("/runs/\(rideID)").text.contains(" km/h"))
            #expect(!(try await ann.get("/runs/\(rideID)").text.contains(" /km")))
            let sessions = all.filter { $0.run.summary.startMs >= Track.start && $0.run.activity.identity?.hasPrefix("serial 9001") == true }
                .sorted { $0.run.summary.startMs < $1.run.summary.startMs }
            #expect(sessions.map(\.run.activity.sport) == [.run, .other, .ride, .run])
            for (index, session) in sessions.enumerated() { check("multisport.fit session \(index + 1)", session, reader: readerDistance("multisport.fit", index)) }
            #expect(sessions.map(\.run.summary.startMs) == [Track.start, Track.start + 1_001_000, Track.start + 1_062_000, Track.start + 2_263_000])
            // Without GPS: the file's own totals, no track, no map.
            let treadmill = all.first { $0.run.activity.identity?.hasPrefix("serial 31 ") == true }
            check("treadmill.fit", treadmill, reader: readerDistance("treadmill.fit"))
            #expect(treadmill?.summary.moving_time_s == 3_000 && treadmill?.summary.chunks == 0)
            let heartOnly = all.first { $0.run.summary.chunks == 0 && $0.run.activity.identity?.hasPrefix("start") == true }
            check("hr-only.tcx", heartOnly, reader: readerDistance("hr-only.tcx"))
            #expect(heartOnly?.summary.moving_time_s == 1_800)
            let treadmillPage = try await ann.get("/runs/\(treadmill?.run.summary.runID ?? "")")
            #expect(treadmillPage.status == .ok && treadmillPage.text.contains("id=\"no-map\"") && treadmillPage.text.contains(" hidden></div>"))
            check("same.fit", all.first { $0.run.activity.identity?.hasPrefix("serial 4242 ") == true }, reader: readerDistance("same.fit"))

            // Not believed: 5 km in no time, and a "run" at 9 m/s; kept, marked, in no record.
            let oneTime = try #require(all.first { $0.run.activity.identity?.hasPrefix("serial 5 ") == true })
            #expect(oneTime.run.activity.doubt?.contains("no elapsed time") == true, "\(String(describing: oneTime.run.activity.doubt))")
            #expect(messages["one-time.fit"]!.contains("not believed"))
            let fast = try #require(activity("Too fast", sport: .run))
            check("fast.gpx", fast, reader: readerDistance("fast.gpx"))
            #expect(fast.run.activity.doubt?.contains("faster than a run can go") == true, "\(String(describing: fast.run.activity.doubt))")
            let fastPage = try await ann.get("/runs/\(fast.run.summary.runID)")
            #expect(fastPage.text.contains("id=\"doubt\""))
            let list = try await ann.get("/runs")
            #expect(list.text.components(separatedBy: "Not believed").count - 1 == 2, "\(list.text)")
            #expect(list.text.contains("Evening walk") && list.text.contains("class=\"sport\">Ride<"))

            // Records from believed runs only: the fastest kilometre is the multisport's first run
            // (3.3 m/s, 5:03), not the ride's (2:05), the "run" at 9 m/s (1:51) or one in no time.
            let stats = try await ann.get("/stats")
            #expect(stats.text.contains("<td>1 km</td><td>5:03</td>"), "\(stats.text)")
            #expect(!stats.text.contains("<td>1 km</td><td>0:00</td>"))
            #expect(stats.text.contains("id=\"other-sports\"") && stats.text.contains("<td>Ride</td><td>25.20 km</td>"), "\(stats.text)")
            #expect(stats.text.contains("<td>Walk</td><td>2.6"))
            print("import set (\(backend)):\nfile | sport | imported m | reader m | off\n" + table.joined(separator: "\n"))
        }
    }

    @Test("the same activity in another file is recognised: the device's serial and start, or the start and the distance", arguments: Backend.allCases)
    func sameActivityRecognised(backend: Backend) async throws {
        let (directory, _) = try await Self.importSet()
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let (ann, csrf) = try await FileTests.signedIn(cloud, "ann@example.org")
            #expect(try await FileTests.upload(cloud, ann, csrf: csrf, fileName: "same.fit", try Self.bytes(directory, "same.fit")).status == .created)
            for other in ["same-copy.fit", "same.gpx"] {
                let again = try await FileTests.upload(cloud, ann, csrf: csrf, fileName: other, try Self.bytes(directory, other))
                #expect(again.status == .ok && again.text.contains("already imported"), "\(other): \(again.text.prefix(600))")
            }
            #expect(try await Self.imported(cloud, email: "ann@example.org").count == 1)
        }
    }

    @Test("several files in one form, and a zip: each file's outcome said, a refused one among them named", arguments: Backend.allCases)
    func severalFilesAndAZip(backend: Backend) async throws {
        let (directory, _) = try await Self.importSet()
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let (ann, csrf) = try await FileTests.signedIn(cloud, "ann@example.org")
            let several = try await Self.upload(cloud, ann, csrf: csrf, [("segments.gpx", try Self.bytes(directory, "segments.gpx")),
                                                                          ("ride.fit", try Self.bytes(directory, "ride.fit")),
                                                                          ("notes.txt", Array("not a run".utf8))])
            #expect(several.status == .created, "\(several.text)")
            #expect(several.text.contains("<b>segments.gpx</b>: GPX walk of 2026-05-10 (Evening walk): 2.6"))
            #expect(several.text.contains("<b>ride.fit</b>: FIT ride"))
            #expect(several.text.contains("<b>notes.txt</b>: not imported: notes.txt: this is neither a FIT file"))
            #expect(try await Self.imported(cloud, email: "ann@example.org").count == 2)
            // The zip holds segments.gpx again (recognised) and hr-only.tcx (new).
            let zip = try await Self.upload(cloud, ann, csrf: csrf, [("archive.zip", try Self.bytes(directory, "archive.zip"))])
            #expect(zip.status == .created, "\(zip.text)")
            #expect(zip.text.contains("archive.zip/walks/segments.gpx</b>: imported before") || zip.text.contains("archive.zip/walks/segments.gpx</b>: already imported"),
                    "\(zip.text)")
            #expect(zip.text.contains("archive.zip/hr-only.tcx</b>: TCX run of 2026-05-10: 5.00 km, no GPS track"))
            #expect(try await Self.imported(cloud, email: "ann@example.org").count == 3)
            // A damaged zip is refused by name.
            var damaged = try Self.bytes(directory, "archive.zip")
            damaged.removeLast(30)
            let refused = try await Self.upload(cloud, ann, csrf: csrf, [("archive.zip", damaged)])
            #expect(refused.status == .badRequest && refused.text.contains("File: archive.zip: zip:"), "\(refused.text)")
        }
    }

    @Test("a device's run whose samples all carry one time is kept, marked, and makes no record, no 0:00 split and no pace",
          arguments: Backend.allCases)
    func deviceRunWithoutElapsedTime(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (token, _) = try await RunnerPageTests.runner(cloud, browser)
            // A believed 5 km at 5:00/km first: its records must stay.
            try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 5_000, paceS: 300, startMs: Track.start - 86_400_000))
            let frozen = RunnerPageTests.run(meters: 5_000, paceS: 300).map { sample in
                var same = sample
                same.timeMs = Track.start
                return same
            }
            let id = try await RunnerPageTests.upload(cloud, token: token, frozen)
            let page = try await browser.get("/runs/\(id)")
            #expect(page.status == .ok)
            #expect(page.text.contains("id=\"doubt\"") && page.text.contains("samples carry no elapsed time"), "\(page.text.prefix(2000))")
            // No split (the zones' table may say 0:00: no time was spent in any).
            #expect(!page.text.contains("<td>1</td><td>0:00</td>") && !page.text.contains("0:00 /km"))
            #expect(page.text.contains("<th>HR</th></tr>\n</table>"), "the splits table has rows")
            let data = try RunnerPageTests.dataBlock(page.text)
            let pace = (data["pace"] as? [Any]) ?? []
            #expect(pace.allSatisfy { ($0 as? Double).map { $0 > 0 } ?? true }, "\(pace)")
            let list = try await browser.get("/runs")
            #expect(list.text.contains("Not believed: "), "\(list.text)")
            let stats = try await browser.get("/stats")
            #expect(stats.text.contains("<td>1 km</td><td>5:00</td>") && stats.text.contains("<td>5 km</td><td>25:00</td>"), "\(stats.text)")
            #expect(!stats.text.contains("0:00</td><td>0:00 /km"))
            // The store keeps why, on both backends.
            let account = try #require(try await cloud.store.accounts.account(email: "ann@example.org")).account
            let stored = try #require(try await cloud.store.runs.accountRun(accountID: account.id, runID: id))
            #expect(stored.activity.doubt?.contains("no elapsed time") == true)
        }
    }

    @Test("the import form's errors: a binary file's name and bytes are not echoed; no file, or an empty one, said once")
    func importErrorMessages() async throws {
        try await Cloud.with(.sqlite, configuration: WebConfig.make()) { cloud in
            let (ann, csrf) = try await FileTests.signedIn(cloud, "ann@example.org")
            var binary = [UInt8](repeating: 0, count: 64)
            for index in binary.indices { binary[index] = UInt8((index * 37 + 3) % 256) }
            binary[5] = UInt8(ascii: "<")
            let refused = try await FileTests.upload(cloud, ann, csrf: csrf, fileName: "photo.jpg", binary)
            #expect(refused.status == .badRequest)
            #expect(refused.text.contains("File: photo.jpg: this is neither a FIT file"), "\(refused.text)")
            #expect(!refused.text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" && $0 != "\t" } && !refused.text.contains("\u{FFFD}"))
            let empty = try await FileTests.upload(cloud, ann, csrf: csrf, fileName: "run.gpx", [])
            #expect(empty.text.contains("File: run.gpx: the file is empty") && !empty.text.lowercased().contains("file: file:"))
            let none = try await Self.upload(cloud, ann, csrf: csrf, [(name: "", bytes: [])])
            #expect(none.status == .badRequest && none.text.contains("File: choose a GPX, TCX or FIT file") && !none.text.lowercased().contains("file: file:"), "\(none.text)")
        }
    }

    @Test("RunDoubt: no elapsed time, time going back and impossible kilometres doubted per sport; a real run believed")
    func runDoubt() {
        let run = RunnerPageTests.run(meters: 3_000, paceS: 240).map { RunDoubt.Point(timeMs: $0.timeMs, distanceM: $0.distanceM) }
        #expect(RunDoubt.reason(distanceM: 3_000, movingS: 720, elapsedS: 720, sport: .run, points: run) == nil)
        #expect(RunDoubt.reason(distanceM: 3_000, movingS: 0, elapsedS: 0, sport: .run, points: [])?.contains("no elapsed time") == true)
        let frozen = run.map { RunDoubt.Point(timeMs: Track.start, distanceM: $0.distanceM) }
        #expect(RunDoubt.reason(distanceM: 3_000, movingS: 720, elapsedS: 720, sport: .run, points: frozen)?.contains("all carry one time") == true)
        let fast = RunnerPageTests.run(meters: 3_000, paceS: 110).map { RunDoubt.Point(timeMs: $0.timeMs, distanceM: $0.distanceM) }
        #expect(RunDoubt.reason(distanceM: 3_000, movingS: 330, elapsedS: 330, sport: .run, points: fast)?.contains("faster than a run") == true)
        // The same speed on a bike is believed.
        #expect(RunDoubt.reason(distanceM: 3_000, movingS: 330, elapsedS: 330, sport: .ride, points: fast) == nil)
        var back = run
        back[10].timeMs -= 5_000
        #expect(RunDoubt.reason(distanceM: 3_000, movingS: 720, elapsedS: 720, sport: .run, points: back)?.contains("back in time") == true)
        // A doubted view makes no best effort and no 0:00 split.
        let view = RunView(samples: RunnerPageTests.run(meters: 3_000).map { var s = $0; s.timeMs = Track.start; return s })
        #expect(view.doubt != nil && view.bestEfforts.isEmpty && view.splits.isEmpty && view.pace.allSatisfy { $0 == nil })
    }

    @Test("MovingClock: the core's rules: stops and long gaps are pauses, short gaps bridged while moving, a new segment a pause")
    func movingClock() {
        var clock = MovingClock()
        for second in 0...100 { clock.add(time: Double(second), speed: 3) }
        #expect(clock.movingTime == 100)
        clock.add(time: 110, speed: 3)  // a 10 s gap while moving: bridged
        #expect(clock.movingTime == 110)
        clock.add(time: 110 + 301, speed: 3)  // past maxBridgeSeconds: a pause
        #expect(clock.movingTime == 110)
        for second in 1...10 { clock.add(time: 411 + Double(second), speed: 0.1) }  // standing
        #expect(clock.movingTime == 110)
        clock.add(time: 1_000, speed: 3, newSegment: true)
        clock.add(time: 1_001, speed: 3)
        #expect(clock.movingTime == 111)
    }
}
