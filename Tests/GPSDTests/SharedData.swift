import Foundation
import PacerCore
import Testing

/// The recorded gpsd logs live outside the repository, in `../shared/data` beside it.
enum SharedData {
    /// `<repo>/Tests/GPSDTests/SharedData.swift` → `<repo>/../shared/data`.
    static let directory: String = {
        let repoRoot = URL(filePath: #filePath)
            .deletingLastPathComponent()  // GPSDTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repo root
        return repoRoot.appending(path: "../shared/data").standardizedFileURL.path
    }()

    static var isAvailable: Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory)
            && isDirectory.boolValue
    }

    static let unavailable: Comment =
        "shared test data not found at ../shared/data beside the repository; these tests need it"

    static func path(_ relative: String) -> String { directory + "/" + relative }

    /// `gpspipe -w` captures replayed through gpsd 3.22 and the simulated runs' gpsd output.
    static var gpsdLogs: [String] {
        files(in: "gpsd-logs/gpspipe-3.22", suffix: ".gpspipe.json")
            + files(in: "sim", suffix: ".gpsd.jsonl")
    }

    static func files(in folder: String, suffix: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path(folder))) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted().map { folder + "/" + $0 }
    }

    /// The file's lines without their terminators (gpspipe writes CR LF). Read once per test
    /// run and shared: the suites walk the same 31,000 lines many times.
    static func lines(_ relative: String) throws -> [String] {
        if let cached = cache[relative] { return cached }
        return try read(relative)
    }

    private static let cache: [String: [String]] = {
        var out: [String: [String]] = [:]
        for file in gpsdLogs { out[file] = try? read(file) }
        return out
    }()

    private static func read(_ relative: String) throws -> [String] {
        let data = try Data(contentsOf: URL(filePath: path(relative)))
        var lines = data.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
        }
        if lines.last?.isEmpty == true { lines.removeLast() }  // after the final newline
        return lines
    }
}

/// Reads values straight from gpsd's JSON text, independently of libgps, to check the decoder.
enum RawJSON {
    static func value(_ key: String, in line: String) -> Substring? {
        guard let keyRange = line.range(of: "\"\(key)\":") else { return nil }
        let rest = line[keyRange.upperBound...]
        let end = rest.firstIndex { $0 == "," || $0 == "}" } ?? rest.endIndex
        return rest[..<end]
    }

    static func number(_ key: String, in line: String) -> Double? {
        value(key, in: line).flatMap { Double(String($0)) }
    }

    static func time(in line: String) -> Timestamp? {
        guard let quoted = value("time", in: line) else { return nil }
        return Timestamp(iso8601: String(quoted.dropFirst().dropLast()))
    }

    static func className(of line: String) -> String? {
        value("class", in: line).map { String($0.dropFirst().dropLast()) }
    }

    static func lines(_ lines: [String], ofClass name: String) -> Int {
        lines.filter { $0.contains("\"class\":\"\(name)\"") }.count
    }
}
