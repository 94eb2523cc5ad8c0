/// Who is on the other end of a control connection, as SO_PEERCRED reported it at connect().
public struct ControlPeer: Sendable, Hashable, CustomStringConvertible {
    public let pid: Int32
    public let uid: UInt32
    public let gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    public var description: String { "pid \(pid), uid \(uid), gid \(gid)" }
}
