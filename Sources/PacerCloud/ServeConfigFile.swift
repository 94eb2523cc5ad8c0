import Foundation

/// `pacer-cloud serve --config FILE`: a file of `option = value` lines, one per `serve` option
/// (`public-url = https://cloud.example.org`), `#` comments and blank lines; an option that takes
/// several values (`trusted-proxy`) is repeated. It becomes the same options on the command line,
/// placed before the real ones, so everything `serve` takes can be configured either way and
/// a command-line option wins. Secrets in it stay out of the process list.
public enum ServeConfigFile {
    public static func arguments(_ text: String, file: String) throws(ConfigurationError) -> [String] {
        var arguments: [String] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let at = "\(file):\(index + 1)"
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError("\(at): expected 'option = value', found '\(line.prefix(80))'")
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }), !key.hasPrefix("-") else {
                throw ConfigurationError("\(at): '\(key.prefix(80))' is not an option name like public-url")
            }
            guard key != "config" else { throw ConfigurationError("\(at): a config file cannot name another config file") }
            guard !value.isEmpty else { throw ConfigurationError("\(at): \(key) has no value") }
            arguments += ["--" + key, value]
        }
        return arguments
    }
}
