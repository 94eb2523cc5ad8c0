/// The ways an alert goes out.
public enum AlertChannelName: String, Sendable, Equatable, Hashable, CaseIterable {
    /// A text message to each emergency contact, through ModemManager.
    case sms
    /// POST to `{upload.url}/v1/alerts`.
    case https
    /// A local command.
    case hook
}
