import Foundation
import Glibc

/// Synchronous waits on a `ChildProcess`, for fixtures whose API blocks (async tests call them
/// through `offPool`). They poll the exit status; nothing here suspends.
extension ChildProcess {
    /// Waits up to `timeout` for the child to exit; its status, or nil if it still runs.
    public func blockingWaitForExit(timeout: Duration) -> Status? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status { return status }
            if ContinuousClock.now >= deadline { return nil }
            usleep(2_000)
        }
    }

    /// SIGTERM to the child (and its group), SIGKILL after `grace`; returns once the child is
    /// reaped and no member of its group is left alive.
    @discardableResult
    public func blockingTerminate(grace: Duration = .seconds(3)) -> Status {
        send(SIGTERM)
        let status = blockingWaitForExit(timeout: grace) ?? killAndReap()
        if let processGroup {
            let deadline = ContinuousClock.now + grace
            while !Self.liveMembers(ofGroup: processGroup).isEmpty {
                if ContinuousClock.now >= deadline {
                    kill(-processGroup, SIGKILL)
                    break
                }
                usleep(5_000)
            }
        }
        return status
    }
}

/// What a finished command left behind.
public struct CommandResult: Sendable, CustomStringConvertible {
    public var status: ChildProcess.Status
    public var standardOutput: String
    public var standardError: String

    public var succeeded: Bool { status == .exited(0) }

    /// Throws (with the command's output) unless it succeeded.
    public func check() throws(ChildProcessError) {
        if !succeeded { throw ChildProcessError(message: "command failed: \(self)") }
    }

    public var description: String {
        "\(status); stdout: \(standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)); "
            + "stderr: \(standardError.trimmingCharacters(in: .whitespacesAndNewlines))"
    }
}

/// Runs a short command to completion and collects its output (busctl, gdbus). Blocking.
public enum BlockingCommand {
    /// Runs `executable` with `arguments`; a command still running after `timeout` is killed
    /// and reported as an error. Output goes through files in a fresh temporary directory.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        timeout: Duration = .seconds(30)
    ) throws(ChildProcessError) -> CommandResult {
        let directory = try TemporaryDirectory(prefix: "pacer-cmd")
        let out = directory.file("stdout")
        let err = directory.file("stderr")
        let process = try ChildProcess(
            executable, arguments, environment: environment, stdout: .file(out), stderr: .file(err))
        guard let status = process.blockingWaitForExit(timeout: timeout) else {
            process.killAndReap()
            let line = ([executable] + arguments).joined(separator: " ")
            throw ChildProcessError(message: "\(line) did not finish within \(timeout)")
        }
        return CommandResult(
            status: status,
            standardOutput: String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self),
            standardError: String(decoding: FileManager.default.contents(atPath: err) ?? Data(), as: UTF8.self))
    }
}

/// A parsed JSON value (busctl's `--json=short` output) that can cross threads.
public enum JSON: Sendable, Equatable, Decodable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    public init(parsing text: String) throws(ChildProcessError) {
        do {
            self = try JSONDecoder().decode(JSON.self, from: Data(text.utf8))
        } catch {
            throw ChildProcessError(message: "not JSON (\(error)): \(text.prefix(300))")
        }
    }

    public subscript(key: String) -> JSON? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    public subscript(index: Int) -> JSON? {
        if case .array(let items) = self, items.indices.contains(index) { items[index] } else { nil }
    }

    public var string: String? { if case .string(let value) = self { value } else { nil } }
    public var number: Double? { if case .number(let value) = self { value } else { nil } }
    public var int: Int? { number.map { Int($0) } }
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    public var array: [JSON]? { if case .array(let items) = self { items } else { nil } }
    public var object: [String: JSON]? { if case .object(let members) = self { members } else { nil } }

    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : "\(value)"
        case .string(let value): "\"\(value)\""
        case .array(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .object(let members):
            "{" + members.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}

extension JSON {
    // JSONDecoder keeps true apart from 1, which JSONSerialization's NSNumbers do not on Linux.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSON].self))
        }
    }
}
