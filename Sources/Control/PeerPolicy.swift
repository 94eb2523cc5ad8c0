/// Who may use the control socket: root, the daemon's own user, and members of the socket's
/// group. File permissions (0660, group pacer) already keep others from connecting; this check
/// also holds when the socket or its directory is more open than intended.
struct PeerPolicy: Sendable {
    let daemonUID: UInt32
    let group: UInt32?

    /// `supplementaryGroups` is asked only when the uid and primary gid do not decide.
    func allows(_ peer: ControlPeer, supplementaryGroups: (ControlPeer) -> [UInt32]?) -> Bool {
        if peer.uid == 0 || peer.uid == daemonUID { return true }
        guard let group else { return false }
        if peer.gid == group { return true }
        return supplementaryGroups(peer)?.contains(group) ?? false
    }

    /// The "Groups:" line of /proc/PID/status. SO_PEERCRED has no supplementary groups, and
    /// this is read after connect(), so a process that exits first is simply refused.
    static func supplementaryGroups(ofProcess pid: Int32) -> [UInt32]? {
        guard pid > 0, let status = Syscalls.readSmallFile("/proc/\(pid)/status") else { return nil }
        return supplementaryGroups(fromStatus: String(decoding: status, as: UTF8.self))
    }

    /// The peer's groups: from /proc when pacerd may see other users' processes, else (the unit's
    /// ProtectProc=invisible hides them) the groups the group database gives the peer's user.
    static func supplementaryGroups(of peer: ControlPeer) -> [UInt32]? {
        supplementaryGroups(ofProcess: peer.pid) ?? SystemGroup.memberships(ofUser: peer.uid, primaryGroup: peer.gid)
    }

    static func supplementaryGroups(fromStatus status: String) -> [UInt32]? {
        for line in status.split(separator: "\n") where line.hasPrefix("Groups:") {
            return line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" })
                .compactMap { UInt32($0) }
        }
        return nil
    }
}
