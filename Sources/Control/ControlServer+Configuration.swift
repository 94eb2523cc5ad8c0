extension ControlServer {
    public struct Configuration: Sendable {
        /// Where to listen; the daemon passes `[control] socket`.
        public var socketPath: String
        /// The socket's group (chown) and the group whose members may connect. nil: no chown,
        /// and only root and the daemon's own user are allowed.
        public var group: UInt32?
        /// The socket file's mode. 0660: the owner and the group may connect, nobody else.
        public var socketMode: UInt32 = 0o660
        /// A request line longer than this gets an error reply and the connection is closed.
        public var maximumRequestBytes = 64 * 1024
        /// Unsent reply bytes per connection above which a streamed chunk waits.
        public var replyBufferLimit = 256 * 1024
        /// A client whose unsent replies make no progress for this long is dropped.
        public var writeTimeout: Duration = .seconds(10)
        /// More clients wait in the listen backlog until one leaves.
        public var maximumConnections = 32

        public init(socketPath: String = ControlSocketPath.defaultPath, group: UInt32? = nil) {
            self.socketPath = socketPath
            self.group = group
        }
    }
}
