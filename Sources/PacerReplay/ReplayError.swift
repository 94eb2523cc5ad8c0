/// Why a replay could not produce a result. Each carries the exit status pacerctl uses
/// (sysexits.h), so scripts can tell bad input from a missing file.
public struct ReplayError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case missingFile, unreadable, emptyFile, noData, malformedLine, badConfig, unsupported
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    public var exitStatus: Int32 {
        switch kind {
        case .missingFile: 66  // EX_NOINPUT
        case .unreadable: 74  // EX_IOERR
        case .emptyFile, .noData, .malformedLine: 65  // EX_DATAERR
        case .badConfig: 78  // EX_CONFIG
        case .unsupported: 64  // EX_USAGE
        }
    }
}
