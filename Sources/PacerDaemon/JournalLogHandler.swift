import Logging
import Systemd

/// swift-log into the journal, for what libraries log (the service group's start and stop).
struct JournalLogHandler: LogHandler {
    let journal: JournalLogger
    let label: String
    var logLevel: Logger.Level = .notice
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = ["COMPONENT": label]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            fields[key.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }.reduce(into: "") { $0.append($1) }] = "\(value)"
        }
        journal.send(priority: Self.priority(event.level), message: "\(event.message)", fields: fields)
    }

    static func priority(_ level: Logger.Level) -> JournalPriority {
        switch level {
        case .trace, .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        case .critical: .critical
        }
    }
}
