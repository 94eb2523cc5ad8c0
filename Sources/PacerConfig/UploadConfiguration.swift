/// `[upload]`: the cloud service runs and alerts go to.
public struct UploadConfiguration: Sendable, Equatable {
    /// "https://pacer.example.org"; nil: nothing is uploaded.
    public var url: String?
    /// The device's bearer token for the service.
    public var token: String?
    /// PEM file of the CA to trust for the service (nil: the system's store).
    public var caFile: String?

    public init() {}
}
