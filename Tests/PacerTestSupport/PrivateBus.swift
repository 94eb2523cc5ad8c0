import Foundation
import Glibc
import Synchronization

/// A real dbus-daemon on a unix socket in a fresh temporary directory, configured like the system
/// bus (type system, EXTERNAL authentication) but with a policy that allows everything, so a test
/// process may own org.bluez and monitor the bus. Stopped by PID on `stop()` or when the last
/// reference goes.
public final class PrivateBus: Sendable {
    /// "unix:path=/tmp/pacer-dbus-…/system_bus_socket", for busctl --address, gdbus --address and
    /// DBUS_SYSTEM_BUS_ADDRESS.
    public let address: String
    public let socketPath: String
    public let directory: TemporaryDirectory
    private let process: ChildProcess

    public var pid: pid_t { process.pid }
    public var isRunning: Bool { process.isRunning }

    /// Starts dbus-daemon and returns once it has printed its address (it listens by then).
    public init(executable: String = "/usr/bin/dbus-daemon", timeout: Duration = .seconds(10)) throws(ChildProcessError) {
        directory = try TemporaryDirectory(prefix: "pacer-dbus")
        socketPath = directory.file("system_bus_socket")
        address = "unix:path=" + socketPath
        let config = directory.file("bus.conf")
        do {
            try Self.configuration(listen: address).write(toFile: config, atomically: true, encoding: .utf8)
        } catch {
            throw ChildProcessError(message: "cannot write \(config): \(error)")
        }
        // --print-address=1: the daemon writes its address to stdout once it listens, which is
        // how we know it is ready.
        process = try ChildProcess(
            executable, ["--nofork", "--print-address=1", "--config-file=" + config],
            stdout: .file(directory.file("address")), stderr: .file(directory.file("stderr")))
        let deadline = ContinuousClock.now + timeout
        while !((try? String(contentsOfFile: directory.file("address"), encoding: .utf8)) ?? "").contains("\n") {
            if let status = process.status {
                throw ChildProcessError(message: "dbus-daemon exited (\(status)) before listening: \(standardError())")
            }
            if ContinuousClock.now >= deadline {
                process.blockingTerminate()
                throw ChildProcessError(message: "dbus-daemon did not listen within \(timeout): \(standardError())")
            }
            usleep(5_000)
        }
    }

    deinit {
        process.killAndReap()
    }

    /// Stops the daemon (SIGTERM, SIGKILL after `grace`) and reaps it. Clients on the bus see
    /// their connection close.
    public func stop(grace: Duration = .seconds(3)) {
        process.blockingTerminate(grace: grace)
    }

    /// What dbus-daemon wrote to stderr (as root it warns that it cannot raise its fd limit).
    public func standardError() -> String {
        (try? String(contentsOfFile: directory.file("stderr"), encoding: .utf8)) ?? ""
    }

    /// A system-bus-like configuration: no activation (no service directories), no limits beyond
    /// the defaults, and every send, receive, ownership and eavesdrop allowed.
    static func configuration(listen: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>\(listen)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow receive_sender="*"/>
            <allow eavesdrop="true"/>
          </policy>
        </busconfig>

        """
    }
}

/// One message as `busctl --json=short monitor` prints it.
public struct BusMessage: Sendable, CustomStringConvertible {
    /// "method_call", "method_return", "error" or "signal".
    public var type: String
    public var sender: String?
    public var destination: String?
    public var path: String?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    /// The body's signature, e.g. "sa{sv}as".
    public var signature: String?
    /// The body's arguments, as busctl renders them (variants as {"type", "data"}).
    public var arguments: [JSON]
    /// When the monitor received it (CLOCK_REALTIME, microseconds).
    public var receivedMicroseconds: UInt64

    init?(_ json: JSON) {
        guard let type = json["type"]?.string else { return nil }
        self.type = type
        sender = json["sender"]?.string
        destination = json["destination"]?.string
        path = json["path"]?.string
        interface = json["interface"]?.string
        member = json["member"]?.string
        errorName = json["error_name"]?.string
        signature = json["payload"]?["type"]?.string
        arguments = json["payload"]?["data"]?.array ?? []
        receivedMicroseconds = UInt64(json["timestamp-realtime"]?.number ?? 0)
    }

    public func isSignal(_ interface: String, _ member: String) -> Bool {
        type == "signal" && self.interface == interface && self.member == member
    }

    public var description: String {
        "\(type) \(sender ?? "-") \(path ?? "") \(interface ?? "").\(member ?? errorName ?? "") \(arguments)"
    }
}

/// `busctl --address=… --json=short monitor NAME…`: every message to or from the given names
/// (all messages if none), one JSON object a line in a file, read back as `BusMessage`s.
public final class BusMonitor: Sendable {
    private let process: ChildProcess
    private let directory: TemporaryDirectory

    /// Starts the monitor and returns once busctl has become a monitor (it says so on stderr),
    /// so nothing sent after this returns is missed.
    public init(address: String, names: [String] = [], timeout: Duration = .seconds(10)) throws(ChildProcessError) {
        directory = try TemporaryDirectory(prefix: "pacer-busmon")
        process = try ChildProcess(
            "busctl", ["--address=" + address, "--json=short", "monitor"] + names,
            stdout: .file(directory.file("messages")), stderr: .file(directory.file("stderr")))
        let deadline = ContinuousClock.now + timeout
        while !standardError().contains("Monitoring bus message stream") {
            if let status = process.status {
                throw ChildProcessError(message: "busctl monitor exited (\(status)): \(standardError())")
            }
            if ContinuousClock.now >= deadline {
                process.blockingTerminate()
                throw ChildProcessError(message: "busctl monitor did not start within \(timeout): \(standardError())")
            }
            usleep(5_000)
        }
    }

    deinit {
        process.killAndReap()
    }

    /// The messages seen so far (complete lines only; busctl flushes after each message).
    public func messages() -> [BusMessage] {
        let text = (try? String(contentsOfFile: directory.file("messages"), encoding: .utf8)) ?? ""
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        if !text.hasSuffix("\n"), !lines.isEmpty { lines.removeLast() }
        return lines.compactMap { line in (try? JSON(parsing: String(line))).flatMap(BusMessage.init) }
    }

    /// Polls until `condition` holds for the messages so far, or `timeout` passes; the messages
    /// at that point and whether the condition held.
    @discardableResult
    public func wait(
        timeout: Duration = .seconds(10),
        until condition: ([BusMessage]) -> Bool
    ) -> (satisfied: Bool, messages: [BusMessage]) {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = messages()
            if condition(seen) { return (true, seen) }
            if ContinuousClock.now >= deadline { return (false, seen) }
            usleep(10_000)
        }
    }

    public func stop() {
        process.blockingTerminate(grace: .seconds(2))
    }

    public func standardError() -> String {
        (try? String(contentsOfFile: directory.file("stderr"), encoding: .utf8)) ?? ""
    }
}
