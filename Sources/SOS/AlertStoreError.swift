/// The SOS store could not be opened or written; worded for the journal.
public struct AlertStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { "SOS store: \(message)" }
}
