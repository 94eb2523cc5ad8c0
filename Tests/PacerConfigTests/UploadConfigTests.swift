import PacerCore
import Testing
@testable import PacerConfig

@Suite(.timeLimit(.minutes(10))) struct UploadConfigTests {
    static func parse(_ text: String) throws(ConfigError) -> PacerConfiguration {
        try PacerConfiguration.parse(text, file: "pacer.toml")
    }

    static func error(_ text: String) -> ConfigError? {
        do { _ = try parse(text) } catch { return error }
        return nil
    }

    @Test func everyKeyParses() throws {
        let config = try Self.parse("""
            [upload]
            url = "https://cloud.example.org/"
            token = "t"
            ca_file = "/etc/pacer/ca.pem"
            client_cert = "/etc/pacer/device.pem"
            client_key = "/etc/pacer/device.key"
            live_position_every_s = 10

            [[privacy_zone]]
            lat = 45.5
            lon = 9.2
            radius_m = 200

            [[privacy_zone]]
            radius_m = 50
            lon = -0.1
            lat = 51.5
            """)
        #expect(config.upload.url == "https://cloud.example.org")
        #expect(config.upload.clientCertificate == "/etc/pacer/device.pem")
        #expect(config.upload.clientKey == "/etc/pacer/device.key")
        #expect(config.upload.livePositionEverySeconds == 10)
        #expect(config.upload.privacyZones == [
            PrivacyZone(center: Coordinate(latitude: 45.5, longitude: 9.2), radiusMeters: 200),
            PrivacyZone(center: Coordinate(latitude: 51.5, longitude: -0.1), radiusMeters: 50),
        ])
    }

    @Test func plainHTTPOnlyToLoopbackWhenAllowed() throws {
        #expect(try Self.parse("[upload]\nurl = \"http://127.0.0.1:8080\"\nallow_http = true").upload.url == "http://127.0.0.1:8080")
        #expect(try Self.parse("[upload]\nallow_http = true\nurl = \"http://localhost:8080\"").upload.url == "http://localhost:8080")
        let notAllowed = Self.error("[upload]\nurl = \"http://127.0.0.1:8080\"")
        #expect(notAllowed?.line == 2)
        #expect(notAllowed?.key == "upload.url")
        #expect(notAllowed?.problem.contains("loopback") == true)
        #expect(Self.error("[upload]\nallow_http = true\nurl = \"http://cloud.example.org\"")?.problem.contains("loopback") == true)
    }

    @Test func anIncompleteZoneNamesWhatIsMissing() {
        let error = Self.error("[[privacy_zone]]\nlat = 45\n\n[[privacy_zone]]\nlat = 1\nlon = 2")
        #expect(error?.key == "privacy_zone[1]")
        #expect(error?.line == 1)
        #expect(error?.problem.contains("missing lon, radius_m") == true)
        #expect(Self.error("[[privacy_zone]]\nlat = 91\nlon = 0\nradius_m = 100")?.key == "privacy_zone[1].lat")
        #expect(Self.error("[[privacy_zone]]\nlat = 1\nlon = 0\nradius_m = 5")?.problem.contains("10 to 10000") == true)
        #expect(Self.error("[[zone]]\nlat = 1")?.problem.contains("[[privacy_zone]]") == true)
    }

    @Test func livePositionPeriod() {
        #expect(Self.error("[upload]\nlive_position_every_s = 2")?.problem.contains("0 for no live position") == true)
        #expect(PacerConfiguration().upload.livePositionEverySeconds == 30)
    }
}

@Suite(.timeLimit(.minutes(10))) struct SyncConfigTests {
    @Test func syncChannelKeys() throws {
        let defaults = PacerConfiguration().upload
        #expect(defaults.sync && defaults.syncEverySeconds == 60 && defaults.stateEverySeconds == 60)
        let config = try UploadConfigTests.parse("[upload]\nsync = false\nsync_every_s = 15\nstate_every_s = 300")
        #expect(!config.upload.sync && config.upload.syncEverySeconds == 15 && config.upload.stateEverySeconds == 300)
        let tooOften = UploadConfigTests.error("[upload]\nsync_every_s = 1")
        #expect(tooOften?.key == "upload.sync_every_s" && tooOften?.problem.contains("5 to 3600") == true)
        #expect(UploadConfigTests.error("[upload]\nstate_every_s = 7200")?.key == "upload.state_every_s")
        #expect(UploadConfigTests.error("[upload]\nsync = \"no\"")?.key == "upload.sync")
    }
}
