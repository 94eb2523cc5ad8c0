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
