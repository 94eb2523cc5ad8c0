import PacerConfig

#if canImport(Glibc)
import Glibc
#endif

/// The wearable's own battery, from sysfs (`/sys/class/power_supply/NAME/capacity`, 0–100).
/// A Pi has none unless a UPS HAT with a fuel-gauge driver is fitted: then nothing is read and
/// nothing is said.
struct PowerSupply: Sendable {
    let directory: String

    /// The configured supply, the first one of type Battery, or nil (disabled, or none found).
    /// `root` is only changed by tests.
    init?(_ monitoring: BatteryMonitoring, root: String = "/sys/class/power_supply") {
        switch monitoring {
        case .disabled: return nil
        case .supply(let name): directory = "\(root)/\(name)"
        case .automatic:
            guard let found = Self.firstBattery(under: root) else { return nil }
            directory = found
        }
    }

    /// The capacity now, or nil when it cannot be read (the supply went away, a driver error).
    func capacityPercent() -> Int? {
        guard let text = Self.readSmallFile("\(directory)/capacity"), let value = Int(text), (0...100).contains(value) else { return nil }
        return value
    }

    private static func firstBattery(under root: String) -> String? {
        guard let dir = opendir(root) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix(".") { names.append(name) }
        }
        // Sorted, so the choice is the same at every start.
        return names.sorted().first { readSmallFile("\(root)/\($0)/type") == "Battery" }.map { "\(root)/\($0)" }
    }

    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        return text.trimmingSuffixWhitespace
    }
}

extension String {
    fileprivate var trimmingSuffixWhitespace: String {
        var s = Substring(self)
        while let last = s.last, last.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
