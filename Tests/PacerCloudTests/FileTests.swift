@testable import CloudModel
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Export
import PacerContract
import PacerCore
import PacerTestSupport
import Testing
@testable import PacerCloud

/// A runner's files on the web: their own runs downloaded as GPX, TCX and FIT (checked by the
/// independent readers of tools/verify-export and tools/verify-fit), and runs recorded elsewhere
/// imported from such files (../shared/data's GPX and TCX within the distances its README
/// asserts, a FIT file written by fit-tool), malformed files refused with a 4xx that says why.
@Suite("pacer-cloud: run files (export and import)", .timeLimit(.minutes(10)))
struct FileTests {
    static let repositoryRoot = DaemonFixture.repositoryRoot
    static let data = DaemonFixture.sharedData

    /// A multipart/form-data body as a browser sends the import form.
    static func multipart(csrf: String?, fileName: String = "run.gpx", file: [UInt8]?) -> (type: String, body: [UInt8]) {
        let boundary = "----pacer-test-\(UUID().uuidString)"
        var body: [UInt8] = []
        if let csrf { body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(csrf)\r\n".utf8) }
        if let file {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(fileName)\"\r\n".utf8)
            body += Array("Content-Type: application/octet-stream\r\n\r\n".utf8) + file + Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        return ("multipart/form-data; boundary=\(boundary)", body)
    }

    /// Signs up and logs in a browser; its session's CSRF token (from the import page).
    static func signedIn(_ cloud: Cloud, _ email: String) async throws -> (Browser, String) {
        let browser = Browser(cloud)
        try await browser.signUpAndLogIn(email)
        let page = try await browser.get("/import")
        #expect(page.status == .ok && page.text.contains("enctype=\"multipart/form-data\""))
        return (browser, Browser.csrf(in: page.text) ?? "")
    }

    static func upload(_ cloud: Cloud, _ browser: Browser, csrf: String?, fileName: String, _ bytes: [UInt8]) async throws -> TestResponse {
        let (type, body) = multipart(csrf: csrf, fileName: fileName, file: bytes)
        var headers: HTTPFields = [.contentType: type]
        headers[.cookie] = browser.cookieHeader
        return try await cloud.client.execute(uri: "/import", method: .post, headers: headers, body: ByteBuffer(bytes: body))
    }

    static func importDevice(_ cloud: Cloud, email: String) async throws -> Device {
        let account = try #require(try await cloud.store.accounts.account(email: email)).account
        return try #require(try await cloud.store.devices.devices().first { $0.name == Device.importDeviceName(accountID: account.id) })
    }

    static func runVerifier(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let result = try await offPool { try DaemonFixture.runBlocking("/usr/bin/env", ["python3"] + arguments) }
        return (result.status, result.stdout + result.stderr)
    }

    // MARK: Export

    @Test("a run downloads as GPX, TCX and FIT that independent readers read back; another account gets 404", arguments: Backend.allCases)
    func ownRunDownloadsInEveryFormat(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let (ann, _) = try await Self.signedIn(cloud, "ann@example.org")
            let (bob, _) = try await Self.signedIn(cloud, "bob@example.org")
            let token = try await cloud.addDevice("ann-pacer")
            let annID = try #require(try await cloud.store.accounts.account(email: "ann@example.org")).account.id
            #expect(try await cloud.store.devices.assignDevice(name: "ann-pacer", accountID: annID))
            let run = Track.runID()
            let samples = Track.samples(900)
            #expect(try await cloud.putChunk(run, 0, Track.chunk(Array(samples[0..<600])), token: token, gzip: false).status == .created)
            #expect(try await cloud.putChunk(run, 1, Track.chunk(Array(samples[600...])), token: token).status == .created)
            #expect(try await cloud.json(.put, "/v1/runs/\(run)", token: token, Track.summary(chunks: 2)).status == .created)

            let directory = try TemporaryDirectory(prefix: "pacer-cloud-files")
            var expected = ""
            for s in samples {
                expected += #"{"time":"\#(WireTime.text(milliseconds: s.timeMs))","lat":\#(s.lat),"lon":\#(s.lon),"hr":\#(s.heartRate.map(String.init) ?? "null"),"#
                    + #""distance":\#(s.distanceM),"speed":\#(s.speedMps)}"# + "\n"
            }
            try expected.write(toFile: directory.file("expected.jsonl"), atomically: true, encoding: .utf8)
            for (format, type) in [("gpx", "application/gpx+xml"), ("tcx", "application/vnd.garmin.tcx+xml"), ("fit", "application/vnd.ant.fit")] {
                let response = try await ann.get("/runs/\(run)/export.\(format)")
                #expect(response.status == .ok, "\(format): \(response.text.prefix(300))")
                #expect(response.headers[.contentType] == type)
                #expect(response.headers[.contentDisposition]?.hasPrefix("attachment; filename=\"pacer-2026-05-10-") == true)
                let path = directory.file("run.\(format)")
                try Data(buffer: response.body).write(to: URL(fileURLWithPath: path))
                let verifier = format == "fit"
                    ? [Self.repositoryRoot + "/tools/verify-fit", path, directory.file("expected.jsonl"), "--distance", "3002.9", "--laps", "1"]
                    : [Self.repositoryRoot + "/tools/verify-export", path, directory.file("expected.jsonl")]
                let result = try await Self.runVerifier(verifier)
                #expect(result.status == 0, "\(format): \(result.output) (tools/setup installs the readers)")

                let refused = try await bob.get("/runs/\(run)/export.\(format)")
                #expect(refused.status == .notFound)
                #expect(!refused.text.contains("45.50"))
            }
            #expect(try await ann.get("/runs/\(Track.runID())/export.fit").status == .notFound)
            #expect(try await ann.get("/runs/not-a-run/export.gpx").status == .notFound)
        }
    }

    // MARK: Import

    /// ../shared/data's tracks with the distance its README asserts for each (sports-lib's
    /// specs, python-tcxparser's test, the device's DistanceMeters) and the tolerance taken:
    /// TCX carries the device's distance, imported as it is; GPX has none, so it is summed on
    /// the WGS-84 ellipsoid, which need not agree with sports-lib's own sum to the metre: within
    /// 0.1 % (measured: 4401.0 m for 4400, 4596.6 m for 4593).
    /// Points: the track points with a position (TCX has some without, while the GPS had no fix).
    static let sharedTracks: [(path: String, distance: Double, tolerance: Double, points: Int, heartRate: Bool)] = [
        ("tcx/python-tcxparser/test.tcx", 4686.31103516, 0.01, 383, true),
        // 943 trackpoints: 15 without a position, 3 repeating the time before them (lap ends).
        ("tcx/gpsbabel/gtrnctr-lap_s.tcx", 10746.6, 0.01, 925, false),
        ("gpx/sports-lib/2067489619.gpx", 4400, 0.001 * 4400, 502, true),
        ("gpx/sports-lib/1681613317.gpx", 4593, 0.001 * 4593, 1038, true),
    ]

    // Skipped, saying so, in a clone without ../shared/data beside it.
    @Test("../shared/data's GPX and TCX files import within the distances its README asserts",
          .enabled(if: DaemonFixture.hasSharedData, "needs ../shared/data beside the repository"), arguments: Backend.allCases)
    func sharedDataImports(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let (ann, csrf) = try await Self.signedIn(cloud, "ann@example.org")
            for track in Self.sharedTracks {
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.data + "/" + track.path)))
                let response = try await Self.upload(cloud, ann, csrf: csrf, fileName: String(track.path.split(separator: "/").last!), bytes)
                #expect(response.status == .created, "\(track.path): \(response.text.prefix(400))")
                let device = try await Self.importDevice(cloud, email: "ann@example.org")
                #expect(device.accountID != nil && device.revoked)
                let runs = try await cloud.store.runs.completeRuns(device: device.id, limit: 100, offset: 0)
                let stored = try #require(runs.first { $0.json.contains(FileTests.startOf(bytes)) }, "\(track.path) not among the runs")
                let summary = try JSONDecoder().decode(RunSummaryBody.self, from: Data(stored.json.utf8))
                #expect(abs(summary.distance_m - track.distance) <= track.tolerance,
                        "\(track.path): \(summary.distance_m) m, README asserts \(track.distance) m (± \(track.tolerance))")
                #expect((summary.hr_max != nil) == track.heartRate, "\(track.path): hr_max \(String(describing: summary.hr_max))")
                let samples = try await cloud.store.runs.storedSamples(device: device.id, runID: stored.runID, below: stored.chunks, excluding: nil)
                #expect(samples == track.points, "\(track.path)")
                print("import \(track.path): \(summary.distance_m) m (README: \(track.distance) m), \(samples) points")
                // An imported run downloads like a device's.
                #expect(try await ann.get("/runs/\(stored.runID)/export.tcx").status == .ok)
            }
            // The same file again: the same run, stored once.
            let again = try await Self.upload(cloud, ann, csrf: csrf, fileName: "test.tcx",
                                              try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.data + "/tcx/python-tcxparser/test.tcx"))))
            #expect(again.status == .ok && again.text.contains("imported before"))
            let device = try await Self.importDevice(cloud, email: "ann@example.org")
            #expect(try await cloud.store.runs.completeRuns(device: device.id, limit: 100, offset: 0).count == Self.sharedTracks.count)
            // The import device is not one of "my devices".
            #expect(!(try await ann.get("/account")).text.contains("imported:"))
        }
    }

    /// The first `<time>`/`<Time>` of a file, as the stored summary's start_time begins.
    static func startOf(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        for tag in ["<Time>", "<time>"] {
            var rest = text[...]
            while let range = rest.range(of: tag) {
                let value = rest[range.upperBound...].prefix(19)
                rest = rest[range.upperBound...]
                // The trkpt/Trackpoint times, not the metadata's: those come after a position.
                if text[..<range.lowerBound].contains("<trkpt") || text[..<range.lowerBound].contains("<Trackpoint") { return String(value) }
            }
        }
        return "?"
    }

    @Test("a FIT file written by fit-tool imports with its points, heart rates and session distance", arguments: Backend.allCases)
    func fitToolFileImports(backend: Backend) async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-fit-tool")
        let result = try await Self.runVerifier([Self.repositoryRoot + "/tools/write-fit-with-fit-tool", directory.file("run.fit"),
                                                 directory.file("expected.json"), "--points", "1500"])
        try #require(result.status == 0, "\(result.output) (tools/setup installs fit-tool)")
        let expected = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.file("expected.json")))) as! [String: Any]
        let points = (expected["points"] as! [[String: Any]]).map {
            (timeMs: ($0["time_ms"] as! NSNumber).int64Value, lat: $0["lat"] as! Double, lon: $0["lon"] as! Double, hr: $0["hr"] as? Int,
             distance: $0["distance"] as! Double)
        }
        let distance = expected["distance"] as! Double
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file("run.fit"))))
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let (ann, csrf) = try await Self.signedIn(cloud, "ann@example.org")
            let response = try await Self.upload(cloud, ann, csrf: csrf, fileName: "run.fit", bytes)
            #expect(response.status == .created, "\(response.text.prefix(400))")
            let device = try await Self.importDevice(cloud, email: "ann@example.org")
            let stored = try #require(try await cloud.store.runs.completeRuns(device: device.id, limit: 1, offset: 0).first)
            let summary = try JSONDecoder().decode(RunSummaryBody.self, from: Data(stored.json.utf8))
            #expect(abs(summary.distance_m - distance) <= 0.01, "session distance \(summary.distance_m), written \(distance)")
            #expect(summary.start_time == "2026-05-10T07:30:00.000Z" && summary.elapsed_time_s == Double(points.count - 1))
            var samples: [ChunkSample] = []
            for seq in 0..<stored.chunks {
                let chunk = try #require(try await cloud.store.runs.chunk(device: device.id, runID: stored.runID, seq: seq))
                samples += try TrackChunkFormat.decode(chunk.body)
            }
            #expect(samples.count == points.count)
            for (sample, point) in zip(samples, points) {
                #expect(sample.timeMs == point.timeMs)
                #expect(abs(sample.lat - point.lat) < 2e-7 && abs(sample.lon - point.lon) < 2e-7)
                #expect(sample.heartRate == point.hr)
                #expect(abs(sample.distanceM - point.distance) <= 0.06)
            }
        }
    }

    @Test("the upload form refuses what it must: no CSRF, no file, not a run file, too large, not multipart", arguments: Backend.allCases)
    func uploadRefusals(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let (ann, csrf) = try await Self.signedIn(cloud, "ann@example.org")
            let gpx = Array(#"<?xml version="1.0"?><gpx version="1.1"><trk><trkseg><trkpt lat="45.5" lon="9.1"><time>2026-05-10T07:30:00Z</time></trkpt><trkpt lat="45.5001" lon="9.1"><time>2026-05-10T07:30:01Z</time></trkpt></trkseg></trk></gpx>"#.utf8)
            #expect(try await Self.upload(cloud, ann, csrf: nil, fileName: "a.gpx", gpx).status == .forbidden)
            #expect(try await Self.upload(cloud, ann, csrf: "wrong", fileName: "a.gpx", gpx).status == .forbidden)
            let none = try await Self.upload(cloud, ann, csrf: csrf, fileName: "a.gpx", [])
            #expect(none.status == .badRequest && none.text.contains("File: a.gpx: the file is empty") && !none.text.lowercased().contains("file: file:"), "\(none.text)")
            let pdf = try await Self.upload(cloud, ann, csrf: csrf, fileName: "a.pdf", Array("%PDF-1.4 not a run".utf8))
            #expect(pdf.status == .badRequest && pdf.text.contains("neither a FIT file"), "\(pdf.text)")
            let html = try await Self.upload(cloud, ann, csrf: csrf, fileName: "a.gpx", Array("<html><body/></html>".utf8))
            #expect(html.status == .badRequest && html.text.contains("&lt;html&gt;"), "\(html.text)")
            let big = try await Self.upload(cloud, ann, csrf: csrf, fileName: "a.gpx", [UInt8](repeating: 0x20, count: FileImport.maxBytes + 1))
            #expect(big.status == .contentTooLarge)
            var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            headers[.cookie] = ann.cookieHeader
            let plain = try await cloud.client.execute(uri: "/import", method: .post, headers: headers, body: ByteBuffer(string: "csrf=\(csrf)"))
            #expect(plain.status == .unsupportedMediaType)
            #expect(try await Self.upload(cloud, ann, csrf: csrf, fileName: "a.gpx", gpx).status == .created)
            #expect(try await cloud.store.counts().runs == 1)
        }
    }

    /// Past the API's 1 MB body limit: a marathon's GPX (4 h at 1 Hz, 1.4 MB) through the real
    /// HTTP server, not only the in-process router.
    @Test("a 1.4 MB GPX file imports through the live server")
    func largeFileThroughTheLiveServer() async throws {
        var gpx = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n" + #"<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>"# + "\n"
        for i in 0..<14_400 {
            let time = WireTime.text(milliseconds: Track.start + Int64(i) * 1000)
            gpx += #"<trkpt lat="\#(45.5 + Double(i) * 0.00002)" lon="9.18"><ele>120.0</ele><time>\#(time)</time></trkpt>"# + "\n"
        }
        gpx += "</trkseg></trk></gpx>\n"
        let bytes = Array(gpx.utf8)
        #expect(bytes.count > 1 << 20)
        try await Cloud.with(.sqlite, configuration: WebConfig.make(), testing: .live) { cloud in
            let (ann, csrf) = try await Self.signedIn(cloud, "ann@example.org")
            // Through curl rather than HummingbirdTesting's live client, whose 20 s read timeout
            // is fixed: in a loaded CI phase the import (a debug build) ran past it once.
            let port = try #require(cloud.client.port)
            let (type, body) = Self.multipart(csrf: csrf, fileName: "marathon.gpx", file: bytes)
            let dir = try TemporaryDirectory()
            try Data(body).write(to: URL(fileURLWithPath: dir.file("body")))
            let result = try await offPool {
                try DaemonFixture.runBlocking("/usr/bin/curl", [
                    "-sS", "--max-time", "150", "-o", dir.file("answer"), "-w", "%{http_code}", "-H", "Content-Type: \(type)",
                    "-H", "Cookie: \(ann.cookieHeader)", "--data-binary", "@" + dir.file("body"), "http://127.0.0.1:\(port)/import",
                ])
            }
            let answer = (try? String(contentsOfFile: dir.file("answer"), encoding: .utf8)) ?? ""
            #expect(result.stdout == "201", "\(result.stdout) \(result.stderr) \(answer.prefix(300))")
            let device = try await Self.importDevice(cloud, email: "ann@example.org")
            let stored = try #require(try await cloud.store.runs.completeRuns(device: device.id, limit: 1, offset: 0).first)
            #expect(try await cloud.store.runs.storedSamples(device: device.id, runID: stored.runID, below: stored.chunks, excluding: nil) == 14_400)
        }
    }

    // MARK: Malformed files

    /// Every truncation point and 300 garbled copies of a file of each format: each is imported
    /// or refused with an ImportError, never a trap. FIT copies get their CRC recomputed, so the
    /// garbling reaches the message parser instead of stopping at the CRC check.
    // Its GPX and TCX originals are ../shared/data's: skipped, saying so, without it.
    @Test("truncated and garbled GPX, TCX and FIT files are refused with a message, never a crash",
          .enabled(if: DaemonFixture.hasSharedData, "needs ../shared/data beside the repository"))
    func fuzzedFilesAreRefusedCleanly() throws {
        let gpx = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.data + "/gpx/sports-lib/2067489619.gpx"))).prefix(6000)
        let tcx = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.data + "/tcx/python-tcxparser/test.tcx"))).prefix(6000)
        var fit: [UInt8] = []
        var writer = FITWriter { fit += $0 }
        let points = Track.samples(40).map {
            ExportPoint(time: Timestamp(milliseconds: $0.timeMs), coordinate: Coordinate(latitude: $0.lat, longitude: $0.lon),
                        heartRate: $0.heartRate, distance: $0.distanceM, speed: $0.speedMps)
        }
        try writer.write(ExportRun(name: "x", startTime: points[0].time, distance: 120, movingTime: 39, elapsedTime: 39), points: points)
        #expect(try FileImport.runs(fit, fileName: "a.fit").runs[0].samples.count == 40)

        var random = SplitMix64(state: 21)
        var outcomes = [0, 0]
        for (name, original) in [("gpx", Array(gpx)), ("tcx", Array(tcx)), ("fit", fit)] {
            var variants: [[UInt8]] = (0..<original.count).filter { $0 % (name == "fit" ? 1 : 37) == 0 }.map { Array(original[..<$0]) }
            for _ in 0..<300 {
                var copy = original
                for _ in 0..<(1 + Int.random(in: 0..<8, using: &random)) {
                    let at = Int.random(in: 0..<copy.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: copy[at] = UInt8(truncatingIfNeeded: random.next())
                    case 1: copy.remove(at: at)
                    default: copy.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
                    }
                }
                if name == "fit", copy.count > 16 {
                    // Keep the header's size and CRCs consistent with the garbled body.
                    let size = copy.count - 16
                    copy[4] = UInt8(size & 0xFF); copy[5] = UInt8(size >> 8 & 0xFF); copy[6] = UInt8(size >> 16 & 0xFF); copy[7] = 0
                    let header = FITProtocol.crc(copy[0..<12])
                    copy[12] = UInt8(header & 0xFF); copy[13] = UInt8(header >> 8)
                    let crc = FITProtocol.crc(copy[0..<(copy.count - 2)])
                    copy[copy.count - 2] = UInt8(crc & 0xFF); copy[copy.count - 1] = UInt8(crc >> 8)
                }
                variants.append(copy)
            }
            for variant in variants {
                do {
                    _ = try FileImport.runs(variant, fileName: "fuzz.\(name)")
                    outcomes[0] += 1
                } catch {
                    #expect(!error.description.isEmpty)
                    outcomes[1] += 1
                }
            }
        }
        // Both happen: some damage is harmless (a changed digit), most is refused.
        #expect(outcomes[0] > 0 && outcomes[1] > 0, "\(outcomes)")
        print("fuzzed imports: \(outcomes[0]) imported, \(outcomes[1]) refused")
    }

    @Test("refusals name what is wrong in the file")
    func refusalsNameTheProblem() {
        func message(_ text: String, _ name: String = "a.gpx") -> String {
            do {
                _ = try FileImport.runs(Array(text.utf8), fileName: name)
                return "imported"
            } catch { return error.description }
        }
        #expect(message(#"<gpx><trk><trkseg><trkpt lat="1" lon="2"><time>2026-05-10T07:30:00Z</time></trkpt></trkseg></trk></gpx>"#)
            .contains("1 point with a time and a position and no totals of its own"))
        #expect(message(#"<gpx><trk><trkseg><trkpt lat="1" lon="2"><time>yesterday</time></trkpt></trkseg></trk></gpx>"#)
            .contains("has the time 'yesterday', not an ISO-8601 time"))
        #expect(message("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\">\n<time>2026-05-10T07:30:00Z</time>").contains("GPX line 2: the file ends inside <trkpt>: it is truncated"))
        #expect(message("<TrainingCenterDatabase><Activities>", "a.tcx").contains("truncated"))
        #expect(message("<gpx><trk></trkseg></gpx>").contains("GPX line 1: </trkseg> where </trk> was expected"))
        #expect(message("<!DOCTYPE gpx [<!ENTITY a \"aaaa\">]><gpx/>").contains("DOCTYPE"))
        #expect(message("<gpx><trk>&unknown;</trk></gpx>").contains("unknown entity"))
        #expect(message("0123456789AB", "a.fit").contains("neither a FIT file"))
        var header: [UInt8] = [14, 0x20, 0, 0, 100, 0, 0, 0] + Array(".FIT".utf8) + [0, 0]
        #expect((try? FileImport.runs(header, fileName: "a.fit")) == nil)
        do { _ = try FileImport.runs(header, fileName: "a.fit") } catch { #expect(error.description.contains("truncated")) }
        header[4] = 0
        do { _ = try FileImport.runs(header + [1, 2], fileName: "a.fit") } catch { #expect(error.description.contains("CRC")) }
    }
}
