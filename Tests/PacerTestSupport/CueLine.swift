import Foundation

/// One cue's fate as pacerd's voice logs it: "said (kind; first sound …): text",
/// "interrupted (kind): text" or "not said (reason) (kind): text".
public struct CueLine: Sendable, Equatable, CustomStringConvertible {
    /// "said", "interrupted" or "not said (reason)".
    public var fate: String
    /// The cue's kind (README: `step`, `sos`, `run_state`, …).
    public var kind: String
    public var text: String

    public init(fate: String, kind: String, text: String) {
        self.fate = fate
        self.kind = kind
        self.text = text
    }

    /// Every cue line of pacerd's stderr, in the order logged.
    public static func parse(_ stderr: String) -> [CueLine] {
        stderr.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: #"(said|interrupted|not said \([a-z]+\)) \([a-z_]+(; [^)]*)?\): "#, options: .regularExpression) else { return nil }
            var head = line[range].dropLast(3)  // "): "
            if let timing = head.range(of: "; ") { head = head[..<timing.lowerBound] }
            guard let open = head.range(of: " (", options: .backwards) else { return nil }
            return CueLine(fate: String(head[..<open.lowerBound]), kind: String(head[open.upperBound...]),
                           text: String(line[range.upperBound...]))
        }
    }

    public var description: String { "\(fate) (\(kind)): \(text)" }
}
