import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// udev/70-pacer.rules: read by udev's own parser, and run on simulated devices.
@Suite(.timeLimit(.minutes(10)))
struct UdevRulesTests {
    static let rules = Support.repositoryFile("udev/70-pacer.rules")

    /// Every rule has a comment right above it (LABEL lines only mark a jump target).
    @Test func everyRuleIsCommented() throws {
        let lines = try String(contentsOfFile: Self.rules, encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false)
        var previous = ""
        var rules = 0
        for (number, line) in lines.enumerated() {
            let text = line.trimmingCharacters(in: .whitespaces)
            defer { previous = text }
            if text.isEmpty || text.hasPrefix("#") || text.hasPrefix("LABEL=") { continue }
            rules += 1
            #expect(previous.hasPrefix("#"), "line \(number + 1) has no comment above it: \(text)")
        }
        #expect(rules >= 8)
    }

    @Suite(
        .enabled(
            if: UdevSimulation.isAvailable,
            "needs root, unshare(1) with mount namespaces and udevadm"))
    struct Simulated {
        @Test(arguments: ["gpio-keys", "gpio-keys-polled"])
        func buttonsGoToGroupPacerReadOnly(driver: String) async throws {
            let directory = try Support.makeTemporaryDirectory()
            defer { Support.removeDirectory(directory) }
            let pacer = try UdevSimulation.groupFile(in: directory).pacerGID
            let outcome = try await UdevSimulation.run(
                rules: UdevRulesTests.rules, device: UdevSimulation.gpioButtons(driver: driver))
            #expect(outcome.problems(in: "70-pacer.rules") == [])
            // After 50-udev-default.rules has made it root:input, as on a real system.
            #expect(outcome.nodeOwnership == "\(pacer) 640", "\(outcome.output)")
        }

        @Test func otherInputDevicesAreLeftAlone() async throws {
            let directory = try Support.makeTemporaryDirectory()
            defer { Support.removeDirectory(directory) }
            let pacer = try UdevSimulation.groupFile(in: directory).pacerGID
            let outcome = try await UdevSimulation.run(
                rules: UdevRulesTests.rules, device: UdevSimulation.usbKeyboard)
            let ownership = try #require(outcome.nodeOwnership, "\(outcome.output)")
            #expect(!ownership.hasPrefix("\(pacer) "))
            #expect(
                !outcome.output.contains("70-pacer.rules:"),
                "a pacer rule matched: \(outcome.output)")
        }

        @Test(arguments: [
            ("1546", "01a7", "cdc_acm", "ttyACM0"),
            ("1546", "01a8", "cdc_acm", "ttyACM0"),
            ("1546", "01a9", "cdc_acm", "ttyACM0"),
            ("067b", "2303", "pl2303", "ttyUSB0"),
            ("067b", "aaa0", "pl2303", "ttyUSB0"),
            ("10c4", "ea60", "cp210x", "ttyUSB0"),
        ])
        func gpsReceiversAreHandedToGpsd(
            vendor: String, product: String, driver: String, tty: String
        ) async throws {
            let outcome = try await UdevSimulation.run(
                rules: UdevRulesTests.rules,
                device: UdevSimulation.usbSerial(
                    vendor: vendor, product: product, driver: driver, kernelName: tty))
            #expect(outcome.problems(in: "70-pacer.rules") == [])
            let properties = outcome.properties
            #expect(
                properties["SYSTEMD_WANTS"]?.split(separator: " ").contains(
                    "gpsdctl@\(tty).service") == true)
            #expect(properties["TAGS"]?.contains(":systemd:") == true)
            #expect(
                properties["DEVLINKS"]?.split(separator: " ").contains("/dev/gps0") == true,
                "\(outcome.output)")
        }

        /// An FTDI cable is not a GPS here (gpsd's own rules disable it for that reason).
        @Test func otherSerialDevicesAreNotHandedToGpsd() async throws {
            let outcome = try await UdevSimulation.run(
                rules: UdevRulesTests.rules,
                device: UdevSimulation.usbSerial(
                    vendor: "0403", product: "6001", driver: "ftdi_sio", kernelName: "ttyUSB0"))
            #expect(outcome.properties["SYSTEMD_WANTS"] == nil)
            #expect(outcome.properties["DEVLINKS"]?.contains("/dev/gps") != true)
        }

        @Test func removalWantsNothing() async throws {
            let outcome = try await UdevSimulation.run(
                rules: UdevRulesTests.rules,
                device: UdevSimulation.usbSerial(
                    vendor: "1546", product: "01a8", driver: "cdc_acm", kernelName: "ttyACM0"),
                action: "remove")
            #expect(outcome.properties["ACTION"] == "remove")
            #expect(outcome.properties["SYSTEMD_WANTS"] == nil)
        }

        /// The parser checks above would pass vacuously if udev said nothing about any file.
        @Test func aBrokenRuleIsReported() async throws {
            let directory = try Support.makeTemporaryDirectory()
            defer { Support.removeDirectory(directory) }
            let broken = directory + "/70-pacer.rules"
            let text = try String(contentsOfFile: UdevRulesTests.rules, encoding: .utf8)
                .replacingOccurrences(of: #"GROUP="pacer""#, with: #"GRUOP="pacer""#)
                .replacingOccurrences(
                    of: #"ATTRS{idProduct}=="01a8""#, with: #"ATTRS{idProduct}="01a8""#)
            try text.write(toFile: broken, atomically: true, encoding: .utf8)
            let outcome = try await UdevSimulation.run(
                rules: broken, device: UdevSimulation.gpioButtons(driver: "gpio-keys"))
            let problems = outcome.problems(in: "70-pacer.rules")
            #expect(problems.count == 2, "\(problems)")
            #expect(problems.contains { $0.contains("GRUOP") })
            #expect(problems.contains { $0.contains("ATTRS") })
        }
    }
}
