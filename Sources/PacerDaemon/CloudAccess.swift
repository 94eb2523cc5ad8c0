import CloudSync
import HTTPClient
import PacerConfig
import SOS
import Synchronization
import Uplink

/// What pacerd talks to the cloud with: the configuration's `[upload]` and the stored link,
/// resolved by `CloudCredentials.resolve`. The uplink, the SOS lane and the sync channel are
/// handed new settings whenever either changes (a reload, `pacerctl cloud link|unlink`).
final class CloudAccess: Sendable {
    private let state: Mutex<(configuration: PacerConfiguration, link: CloudLink?)>
    let file: CloudLinkFile

    init(configuration: PacerConfiguration, link: CloudLink?, file: CloudLinkFile) {
        state = Mutex((configuration, link))
        self.file = file
    }

    var configuration: PacerConfiguration { state.withLock { $0.configuration } }
    var link: CloudLink? { state.withLock { $0.link } }
    /// The URL and token every request to the cloud uses now.
    var credentials: CloudCredentials { state.withLock { CloudCredentials.resolve(upload: $0.configuration.upload, link: $0.link) } }

    func reloaded(_ configuration: PacerConfiguration) { state.withLock { $0.configuration = configuration } }
    func linked(_ link: CloudLink?) { state.withLock { $0.link = link } }

    var uplinkSettings: UplinkSettings { state.withLock { UplinkSettings($0.configuration, link: $0.link) } }
    var laneSettings: LaneSettings { state.withLock { LaneSettings($0.configuration, link: $0.link) } }
    var syncSettings: SyncSettings { state.withLock { SyncSettings($0.configuration, link: $0.link) } }
    var answerSettings: AnswerSettings { state.withLock { AnswerSettings($0.configuration, link: $0.link) } }
}
