import FoundationEssentials
import PacerConfig
import PacerReplay

#if canImport(Glibc)
import Glibc
#endif

let defaultConfigPath = "/etc/pacer/pacer.toml"

/// Reads the config file. An explicitly named file must exist; the default one may be absent
/// (defaults then apply). A bad file is an error naming file, line and key: exit 78.
func loadConfiguration(_ explicitPath: String?) -> PacerConfiguration {
    let path = explicitPath ?? defaultConfigPath
    if access(path, F_OK) != 0 {
        if explicitPath == nil { return PacerConfiguration() }
        fail(ReplayError(.missingFile, "\(path): no such config file"))
    }
    do {
        let data = try Data(contentsOf: URL(filePath: path))
        return try PacerConfiguration.parse(String(decoding: data, as: UTF8.self), file: path)
    } catch let error as ConfigError {
        fail(ReplayError(.badConfig, error.description))
    } catch {
        fail(ReplayError(.unreadable, "\(path): cannot read config (\(String(cString: strerror(errno))))"))
    }
}
