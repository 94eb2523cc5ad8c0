import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs the real `udevadm test` (systemd 252: no `udevadm verify` yet) on simulated devices.
/// Everything happens in a private mount namespace: tmpfs over /run, /sys and /dev, a fake
/// sysfs tree for the device, only the rules under test in the rules directories, and an
/// /etc/group that has a pacer group. Nothing of this machine's /dev, /run or /etc changes,
/// and the pacer group need not exist here.
enum UdevSimulation {
    static let udevadm = Support.tool("udevadm")
    static let unshare = Support.tool("unshare")

    /// Root, the tools, and a namespace in which tmpfs mounts and mknod work.
    static let isAvailable: Bool = {
        guard geteuid() == 0, let unshare, udevadm != nil else { return false }
        let probe = try? Support.runBlocking(
            unshare,
            [
                "--mount", "--propagation", "private", "/bin/sh", "-c",
                "mount -t tmpfs tmpfs /tmp && mknod /tmp/null c 1 3",
            ])
        return probe?.status == 0
    }()

    /// A device as the kernel would show it in sysfs, with its parents.
    struct Device {
        /// Shell commands building the tree under /sys (see `script`'s `node` function).
        let setup: String
        /// Under /sys/devices.
        let syspath: String
        /// The /dev node whose group and mode are reported afterwards.
        let node: String?
    }

    struct Outcome {
        /// udevadm's log and the properties it prints.
        let output: String
        /// `<gid> <octal mode>` of the device node after the rules ran.
        let nodeOwnership: String?

        /// `NAME=value` lines of the final property list.
        var properties: [String: String] {
            var result: [String: String] = [:]
            for line in output.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "="),
                    line[..<equals].allSatisfy({ $0.isUppercase || $0 == "_" || $0.isNumber })
                else { continue }
                result[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            return result
        }

        /// Complaints about the rules file itself, which udev logs as `<file>:<line> <text>`
        /// while loading. (While processing, lines start with the device name instead.)
        func problems(in rulesName: String) -> [String] {
            output.split(separator: "\n").map(String.init).filter {
                guard let range = $0.range(of: "/" + rulesName + ":") else { return false }
                return !$0[..<range.lowerBound].contains(" ")
            }
        }
    }

    /// The group file given to udev: this machine's, plus a pacer group if it has none.
    static func groupFile(in directory: String) throws -> (path: String, pacerGID: UInt32) {
        var text = try String(contentsOfFile: "/etc/group", encoding: .utf8)
        if !text.hasSuffix("\n") { text += "\n" }
        var used = Set<UInt32>()
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count >= 3, let gid = UInt32(fields[2]) else { continue }
            if fields[0] == "pacer" { return ("/etc/group", gid) }
            used.insert(gid)
        }
        let gid = (900..<1000).reversed().first { !used.contains($0) } ?? 4242
        let path = directory + "/group"
        try (text + "pacer:x:\(gid):\n").write(toFile: path, atomically: true, encoding: .utf8)
        return (path, gid)
    }

    static func run(
        rules: String, device: Device, action: String = "add", withDefaultRules: Bool = true
    ) async throws -> Outcome {
        let directory = try Support.makeTemporaryDirectory()
        defer { Support.removeDirectory(directory) }
        let group = try groupFile(in: directory)
        let defaultRules = "/lib/udev/rules.d/50-udev-default.rules"
        let script = """
            set -e
            # node PATH SUBSYSTEM DRIVER UEVENT: one sysfs device directory.
            node() {
                mkdir -p "$1" "/sys/class/$2"
                ln -s "/sys/class/$2" "$1/subsystem"
                if [ -n "$3" ]; then mkdir -p "/sys/bus/any/drivers/$3"; ln -s "/sys/bus/any/drivers/$3" "$1/driver"; fi
                printf '%b' "$4" > "$1/uevent"
            }
            mount -t tmpfs tmpfs /run
            mount -t tmpfs tmpfs /sys
            mount -t tmpfs tmpfs /dev
            mkdir -p /run/udev/rules.d /dev/input
            cp '\(rules)' /run/udev/rules.d/70-pacer.rules
            \(withDefaultRules ? "[ -f \(defaultRules) ] && cp \(defaultRules) /run/udev/rules.d/" : "")
            mount --bind /run/udev/rules.d /lib/udev/rules.d
            mount --bind /run/udev/rules.d /etc/udev/rules.d
            mount --bind '\(group.path)' /etc/group
            \(device.setup)
            # The fake tree is tmpfs, not sysfs; this variable is systemd's switch for such tests.
            SYSTEMD_DEVICE_VERIFY_SYSFS=0 '\(udevadm!)' test --action=\(action) '\(device.syspath)' 2>&1
            \(device.node.map { "echo \"@@NODE $(stat -c '%g %a' \($0))\"" } ?? "")
            """
        let scriptPath = directory + "/simulate.sh"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let result = try await Support.run(
            unshare!, ["--mount", "--propagation", "private", "/bin/sh", scriptPath])
        guard result.status == 0 else {
            throw Unexpected(
                description:
                    "simulation failed (\(result.status)): \(result.standardOutput)\(result.standardError)"
            )
        }
        let ownership = result.standardOutput.split(separator: "\n")
            .first { $0.hasPrefix("@@NODE ") }.map { String($0.dropFirst(7)) }
        return Outcome(output: result.standardOutput, nodeOwnership: ownership)
    }

    // MARK: - Devices

    /// A button event node under a platform device bound to `driver`.
    static func gpioButtons(driver: String) -> Device {
        let base = "/sys/devices/platform/gpio-keys"
        return Device(
            setup: """
                node \(base) platform \(driver) 'DRIVER=\(driver)\\n'
                node \(base)/input/input0 input '' 'NAME="gpio-keys"\\n'
                node \(base)/input/input0/event0 input '' 'MAJOR=13\\nMINOR=64\\nDEVNAME=input/event0\\n'
                mknod -m 0600 /dev/input/event0 c 13 64
                """,
            syspath: base + "/input/input0/event0", node: "/dev/input/event0")
    }

    /// A USB keyboard's event node (usbhid), which must not go to pacer.
    static var usbKeyboard: Device {
        let base = "/sys/devices/platform/usb/1-2"
        return Device(
            setup: """
                node \(base) usb usb 'DEVTYPE=usb_device\\nDRIVER=usb\\n'
                node \(base)/1-2:1.0 usb usbhid 'DEVTYPE=usb_interface\\nDRIVER=usbhid\\n'
                node \(base)/1-2:1.0/input/input1 input '' 'NAME="USB Keyboard"\\n'
                node \(base)/1-2:1.0/input/input1/event1 input '' 'MAJOR=13\\nMINOR=65\\nDEVNAME=input/event1\\n'
                mknod -m 0600 /dev/input/event1 c 13 65
                """,
            syspath: base + "/1-2:1.0/input/input1/event1", node: "/dev/input/event1")
    }

    /// A USB serial device with these ids, as the tty `kernelName` (ttyACM0, ttyUSB0).
    static func usbSerial(vendor: String, product: String, driver: String, kernelName: String)
        -> Device
    {
        let base = "/sys/devices/platform/usb/1-1"
        return Device(
            setup: """
                node \(base) usb usb 'DEVTYPE=usb_device\\nDRIVER=usb\\n'
                echo \(vendor) > \(base)/idVendor
                echo \(product) > \(base)/idProduct
                node \(base)/1-1:1.0 usb \(driver) 'DEVTYPE=usb_interface\\nDRIVER=\(driver)\\n'
                node \(base)/1-1:1.0/tty/\(kernelName) tty '' 'MAJOR=166\\nMINOR=0\\nDEVNAME=\(kernelName)\\n'
                """,
            syspath: base + "/1-1:1.0/tty/" + kernelName, node: nil)
    }
}
