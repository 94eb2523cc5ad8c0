import BlueZ
import PacerConfig

/// Which straps pacerd holds on to, and why: `[hr] strap` in the config wins; otherwise the one
/// chosen with `pacerctl strap pair`, kept in the state directory; otherwise none.
struct StrapChoice: Sendable, Equatable {
    enum Source: String, Sendable {
        case config, paired, none
    }

    var straps: [StrapAddress]
    var source: Source
    var adapter: String?

    static func resolve(_ configuration: PacerConfiguration, paired: StrapAddress?) -> StrapChoice {
        let backup = configuration.heartRateBackupStrap.flatMap(StrapAddress.init)
        if let configured = configuration.heartRateStrap.flatMap(StrapAddress.init) {
            return StrapChoice(straps: [configured] + [backup].compactMap { $0 }.filter { $0 != configured }, source: .config, adapter: configuration.bluetoothAdapter)
        }
        if let paired {
            return StrapChoice(straps: [paired] + [backup].compactMap { $0 }.filter { $0 != paired }, source: .paired, adapter: configuration.bluetoothAdapter)
        }
        return StrapChoice(straps: [], source: .none, adapter: configuration.bluetoothAdapter)
    }
}
