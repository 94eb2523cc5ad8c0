#if canImport(Glibc)
import Glibc
#endif

/// Group names and ids from the system's group database (getgrnam_r/getgrgid_r), so pacerd can
/// turn `group = "pacer"` into a gid and pacerctl can name the group a socket needs.
public enum SystemGroup {
    public static func id(named name: String) -> UInt32? {
        lookup { entry, buffer, result in getgrnam_r(name, &entry, buffer.baseAddress, buffer.count, &result) }
            .map { $0.gid }
    }

    public static func name(ofID id: UInt32) -> String? {
        lookup { entry, buffer, result in getgrgid_r(id, &entry, buffer.baseAddress, buffer.count, &result) }
            .map { $0.name }
    }

    /// Every group `uid`'s user belongs to in the group database (getgrouplist), nil when the
    /// user is unknown.
    static func memberships(ofUser uid: UInt32, primaryGroup: UInt32) -> [UInt32]? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        let name: String? = buffer.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, getpwuid_r(uid, &entry, base, buffer.count, &result) == 0, let found = result else { return nil }
            return String(cString: found.pointee.pw_name)
        }
        guard let name else { return nil }
        var count: Int32 = 64
        while count <= 65_536 {
            var groups = [gid_t](repeating: 0, count: Int(count))
            var wanted = count
            if getgrouplist(name, primaryGroup, &groups, &wanted) >= 0 { return Array(groups.prefix(Int(wanted))) }
            count = max(wanted, count * 2)
        }
        return nil
    }

    private static func lookup(
        _ call: (inout group, UnsafeMutableBufferPointer<CChar>, inout UnsafeMutablePointer<group>?) -> Int32
    ) -> (gid: UInt32, name: String)? {
        var size = 1024
        // Groups with many members need a bigger buffer: ERANGE says so; 1 MiB is plenty.
        while size <= 1 << 20 {
            var entry = group()
            var result: UnsafeMutablePointer<group>?
            var buffer = [CChar](repeating: 0, count: size)
            // The entry's strings point into the buffer: copy them out while it is borrowed.
            let (status, found) = buffer.withUnsafeMutableBufferPointer { buffer in
                let status = call(&entry, buffer, &result)
                return (status, result.map { ($0.pointee.gr_gid, String(cString: $0.pointee.gr_name)) })
            }
            if status == ERANGE {
                size *= 4
                continue
            }
            guard status == 0, let found else { return nil }
            return found
        }
        return nil
    }
}
