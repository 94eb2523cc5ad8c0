import Foundation
import PacerTestSupport
import Systemd
import Testing

/// The sd-bus connection against a real dbus-daemon on a private socket, with a peer written
/// against another D-Bus implementation (tools/dbus-test-peer.py: dbus-python over libdbus), so
/// marshalling is checked by someone else's reader, not only by our own.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct BusConnectionTests {
    /// A private bus with the test peer on it.
    final class Fixture: Sendable {
        let bus: PrivateBus
        let peer: ChildProcess

        init() throws {
            bus = try PrivateBus()
            let output = bus.directory.file("peer.out")
            peer = try ChildProcess(
                "/usr/bin/python3", [Support.repositoryFile("tools/dbus-test-peer.py")],
                environment: ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": bus.address]) { $1 },
                stdout: .file(output), stderr: .file(bus.directory.file("peer.err")))
            let deadline = Date().addingTimeInterval(10)
            while !((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("ready") {
                if peer.status != nil || Date() > deadline {
                    let stderr = (try? String(contentsOfFile: bus.directory.file("peer.err"), encoding: .utf8)) ?? ""
                    throw PeerError(message: "the test peer did not start: \(stderr)")
                }
                usleep(10_000)
            }
        }

        static func start() async throws -> Fixture { try await offPool { try Fixture() } }
    }

    struct PeerError: Error { let message: String }

    static func peerCall(_ member: String, _ arguments: [BusValue] = []) -> BusMethodCall {
        BusMethodCall(destination: "org.pacer.TestPeer", path: "/org/pacer/TestPeer", interface: "org.pacer.TestPeer", member: member, arguments: arguments)
    }

    @Test func callsTheBusDaemonItself() async throws {
        let fixture = try await Fixture.start()
        let connection = try BusConnection.connect(address: fixture.bus.address)
        defer { connection.close() }
        let names = try await connection.call(BusMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "ListNames"))
        #expect(names.first?.stringArrayValue?.contains("org.pacer.TestPeer") == true)
        #expect(try await connection.nameOwner("org.pacer.TestPeer")?.hasPrefix(":") == true)
        #expect(try await connection.nameOwner("org.bluez") == nil)
    }

    @Test func valuesSurviveARoundTripThroughAnotherImplementation() async throws {
        let fixture = try await Fixture.start()
        let connection = try BusConnection.connect(address: fixture.bus.address)
        defer { connection.close() }
        let samples: [BusValue] = [
            .byte(0xFF), .bool(true), .bool(false), .int16(-32768), .uint16(65535), .int32(-7), .uint32(4_000_000_000),
            .int64(-9_000_000_000_000), .uint64(18_000_000_000_000_000_000), .double(-1.25), .string("Grüße, \"quoted\" 'x'"),
            .objectPath("/org/bluez/hci0/dev_C8_4F_0E_12_34_56"), .signature("a{sv}"),
            .bytes([0x16, 0x48, 0x54, 0x01, 0xEC, 0x02]), .bytes([]),
            .array(element: "s", []), .strings(["0000180d-0000-1000-8000-00805f9b34fb", ""]),
            .dictionary(["UUIDs": .strings(["180d"]), "Transport": .string("le"), "RSSI": .int16(-60), "Nested": .dictionary(["x": .uint32(1)])]),
            .structure([.string("a"), .uint16(2)]),
            .array(element: "{oa{sa{sv}}}", [.dictEntry(.objectPath("/a"), .array(element: "{sa{sv}}", [.dictEntry(.string("org.bluez.Device1"), .dictionary(["Connected": .bool(true)]))]))]),
        ]
        for sample in samples {
            let reply = try await connection.call(Self.peerCall("Echo", [.variant(sample)]))
            #expect(reply == [.variant(sample)], "\(sample.signature)")
        }
        let many = try await connection.call(Self.peerCall("EchoMany", [
            .dictionary(["Value": .bytes([1, 2, 3])]), .bytes(Array(0...255)), .structure([.string("s"), .uint16(7)]),
            .array(element: "o", [.objectPath("/x"), .objectPath("/y")]),
        ]))
        #expect(many.count == 4)
        #expect(many[0].dictionaryValue?["Value"]?.bytesValue == [1, 2, 3])
        #expect(many[1] == .bytes(Array(0...255)))
        #expect(many[2] == .structure([.string("s"), .uint16(7)]))
        #expect(many[3].stringArrayValue == ["/x", "/y"])
    }

    @Test func errorsCarryTheirDBusNames() async throws {
        let fixture = try await Fixture.start()
        let connection = try BusConnection.connect(address: fixture.bus.address)
        defer { connection.close() }
        await #expect(throws: BusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")) {
            _ = try await connection.call(Self.peerCall("Fail", [.string("org.bluez.Error.Failed"), .string("le-connection-abort-by-local")]))
        }
        do {
            _ = try await connection.call(BusMethodCall(destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects"))
            Issue.record("a call to a name nobody owns was answered")
        } catch {
            #expect(error.isServiceUnknown, "\(error)")
        }
        do {
            _ = try await connection.call(Self.peerCall("Sleep", [.double(3)]), timeout: .milliseconds(200))
            Issue.record("a call past its timeout was answered")
        } catch {
            #expect(error.isTimeout, "\(error)")
        }
    }

    @Test func signalsArriveInOrderOnceTheMatchIsInstalled() async throws {
        let fixture = try await Fixture.start()
        let connection = try BusConnection.connect(address: fixture.bus.address)
        defer { connection.close() }
        let signals = try await connection.signals(matching: BusMatchRule(sender: "org.pacer.TestPeer", interface: "org.pacer.TestPeer", member: "Tick"))
        // The match is in place when `signals` returns: every one emitted after it arrives.
        _ = try await connection.call(Self.peerCall("Emit", [.uint32(500)]))
        var expected: UInt32 = 0
        for await signal in signals {
            #expect(signal.arguments == [.uint32(expected)])
            #expect(signal.path == "/org/pacer/TestPeer")
            #expect(signal.receivedNs > 0)
            expected += 1
            if expected == 500 { break }
        }
        #expect(expected == 500)
    }

    @Test func manyTasksCanCallAtOnce() async throws {
        let fixture = try await Fixture.start()
        let connection = try BusConnection.connect(address: fixture.bus.address)
        defer { connection.close() }
        // 100 at a time: dbus-daemon allows 128 pending replies per connection (as the system bus does).
        var answered = 0
        for round in 0..<4 {
            answered += try await withThrowingTaskGroup(of: Bool.self) { group in
                for n in (round * 100)..<(round * 100 + 100) {
                    group.addTask { try await connection.call(Self.peerCall("Echo", [.variant(.uint32(UInt32(n)))])) == [.variant(.uint32(UInt32(n)))] }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
        }
        #expect(answered == 400)
    }

    @Test func aBusThatGoesAwayEndsCallsAndStreams() async throws {
        let fixture = try await Fixture.start()
        let connection = try BusConnection.connect(address: fixture.bus.address)
        let signals = try await connection.signals(matching: BusMatchRule(sender: "org.pacer.TestPeer"))
        let pending = Task { () -> Result<[BusValue], BusError> in
            do throws(BusError) { return .success(try await connection.call(Self.peerCall("Sleep", [.double(30)]))) } catch { return .failure(error) }
        }
        try await Task.sleep(for: .milliseconds(200))
        try await offPool { fixture.bus.stop() }
        var count = 0
        for await _ in signals { count += 1 }
        #expect(count == 0)
        switch await pending.value {
        case .success: Issue.record("a call was answered by a bus that is gone")
        case .failure(let error): #expect(error.isClosed || error.name.hasPrefix("org.freedesktop.DBus.Error"), "\(error)")
        }
        await connection.waitUntilClosed()
        #expect(!connection.isOpen)
        await #expect(throws: BusError.self) { _ = try await connection.call(Self.peerCall("Echo", [.variant(.byte(1))])) }
    }

    @Test func closingEndsStreamsAndRefusesCalls() async throws {
        let fixture = try await Fixture.start()
        let connection = try BusConnection.connect(address: fixture.bus.address)
        let signals = try await connection.signals(matching: BusMatchRule(sender: "org.pacer.TestPeer"))
        connection.close()
        for await _ in signals {}
        await connection.waitUntilClosed()
        do {
            _ = try await connection.call(Self.peerCall("Echo", [.variant(.byte(1))]))
            Issue.record("a closed connection made a call")
        } catch {
            #expect(error.isClosed)
        }
    }

    @Test func theSystemBusAddressComesFromTheEnvironment() async throws {
        // sd_bus_open_system honours DBUS_SYSTEM_BUS_ADDRESS; pacerd relies on it in tests.
        let fixture = try await Fixture.start()
        setenv("DBUS_SYSTEM_BUS_ADDRESS", fixture.bus.address, 1)
        defer { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
        let connection = try BusConnection.system()
        defer { connection.close() }
        #expect(try await connection.nameOwner("org.pacer.TestPeer") != nil)
    }
}
