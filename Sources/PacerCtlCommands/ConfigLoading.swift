import PacerConfig
import PacerReplay

/// Reads the config file (see PacerConfiguration.load). A bad file is an error naming file, line
/// and key: exit 78.
func loadConfiguration(_ explicitPath: String?) -> PacerConfiguration {
    do {
        return try PacerConfiguration.load(path: explicitPath)
    } catch {
        switch error {
        case .missing: fail(ReplayError(.missingFile, error.description))
        case .invalid: fail(ReplayError(.badConfig, error.description))
        case .unreadable: fail(ReplayError(.unreadable, error.description))
        }
    }
}
