import Foundation

/// ../shared/data beside the repository (CI clones the repo with shared/ next to it).
enum SharedData {
    static let repositoryRoot: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/PacerReplayTests/SharedData.swift
        return parts.joined(separator: "/")
    }()

    static let directory = repositoryRoot + "/../shared/data"

    static var isAvailable: Bool { FileManager.default.fileExists(atPath: directory + "/sim") }

    static func path(_ relative: String) -> String { directory + "/" + relative }

    /// A scratch file with the given content, removed by the caller.
    static func temporaryFile(_ content: String, suffix: String = ".jsonl") -> String {
        let path = NSTemporaryDirectory() + "pacer-test-\(UUID().uuidString)\(suffix)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(content.utf8))
        return path
    }
}
