import FoundationEssentials
import PacerContract

extension LivePosition {
    /// The body of `PUT /v1/position`: sorted keys.
    public var json: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { [UInt8]($0) } ?? Array("{}".utf8)
    }
}
