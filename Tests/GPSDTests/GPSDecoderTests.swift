import GPSD
import PacerCore
import Testing

/// Hand-written lines: the cases the recorded logs do not show, or show only by luck.
@Suite(.timeLimit(.minutes(10)))
struct GPSDecoderTests {
    /// The first fix after city-10k-1's first underpass, with an `eps` added.
    static let fullTPV =
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2026-05-10T07:35:07.000Z","ept":0.005,"lat":45.480965417,"lon":9.231809350,"altHAE":166.0000,"altMSL":119.0000,"alt":119.0000,"epv":2297.700,"track":357.3000,"magtrack":0.0182,"magvar":2.7,"speed":3.233,"geoidSep":47.000,"eph":1898.100,"eps":0.61,"sep":1898.100}"#

    static func time(_ iso: String) -> Timestamp { Timestamp(iso8601: iso)! }

    static func fix(_ line: String, _ decoder: GPSDecoder = GPSDecoder()) throws -> GPSFix {
        guard case .fix(let fix) = try decoder.decode(line) else {
            Issue.record("not a fix: \(line)")
            return GPSFix(time: nil, mode: .notSeen, latitude: nil, longitude: nil)
        }
        return fix
    }

    @Test func fullReport() throws {
        let fix = try Self.fix(Self.fullTPV)
        #expect(fix.time == Self.time("2026-05-10T07:35:07.000Z"))
        #expect(fix.mode == .threeD)
        #expect(fix.status == .unknown)
        #expect(fix.latitude.map { abs($0 - 45.480965417) < 1e-12 } == true)
        #expect(fix.longitude.map { abs($0 - 9.231809350) < 1e-12 } == true)
        #expect(fix.altitude == 119.0)  // altMSL (elevation as maps give it), not altHAE (166)
        #expect(fix.speed == 3.233)
        #expect(fix.track == 357.3)
        #expect(fix.eph == 1898.1)
        #expect(fix.eps == 0.61)
    }

    @Test func noFixCarriesNoPosition() throws {
        let fix = try Self.fix(
            #"{"class":"TPV","device":"/dev/pts/1","mode":1,"time":"2026-05-10T07:35:04.000Z","ept":0.005}"#)
        #expect(
            fix == GPSFix(
                time: Self.time("2026-05-10T07:35:04.000Z"), mode: .noFix, latitude: nil, longitude: nil))
    }

    /// As gpsd 3.22 sends before the receiver has a position or a time.
    @Test func modeThreeWithoutPositionOrTime() throws {
        let fix = try Self.fix(
            #"{"class":"TPV","device":"/dev/pts/4","mode":3,"epv":20.700,"eph":20.900,"sep":26.600}"#)
        #expect(fix == GPSFix(time: nil, mode: .threeD, latitude: nil, longitude: nil, eph: 20.9))
    }

    @Test(arguments: [
        (#"{"class":"TPV","mode":3}"#, GPSFix.Status.unknown),
        (#"{"class":"TPV","status":2,"mode":3}"#, .dgps),
        (#"{"class":"TPV","status":8,"mode":3}"#, .simulated),
        (#"{"class":"TPV","status":42,"mode":3}"#, .unknown),
    ])
    func status(_ line: String, _ expected: GPSFix.Status) throws {
        #expect(try Self.fix(line).status == expected)
    }

    @Test(arguments: [
        (#"{"class":"TPV"}"#, GPSFix.Mode.notSeen),
        (#"{"class":"TPV","mode":0}"#, .notSeen),
        (#"{"class":"TPV","mode":2}"#, .twoD),
        (#"{"class":"TPV","mode":7}"#, .notSeen),
    ])
    func mode(_ line: String, _ expected: GPSFix.Mode) throws {
        #expect(try Self.fix(line).mode == expected)
    }

    @Test func nothingLeaksIntoTheNextLine() throws {
        let decoder = GPSDecoder()
        _ = try Self.fix(Self.fullTPV, decoder)
        let sparse = try Self.fix(
            #"{"class":"TPV","mode":2,"time":"2026-05-10T07:35:08.000Z","lat":45.5,"lon":9.2}"#, decoder)
        #expect(
            sparse == GPSFix(
                time: Self.time("2026-05-10T07:35:08.000Z"), mode: .twoD, latitude: 45.5, longitude: 9.2))

        _ = try decoder.decode(
            #"{"class":"SKY","time":"2026-05-10T07:35:08.000Z","hdop":0.9,"pdop":1.4,"satellites":[{"PRN":1,"used":true}]}"#)
        #expect(
            try decoder.decode(#"{"class":"SKY","pdop":2.0}"#)
                == .sky(SkyReport(time: nil, hdop: nil, pdop: 2.0, satellitesUsed: 0, satellitesSeen: 0)))

        // VERSION and ERROR share storage inside libgps.
        #expect(try decoder.decode(#"{"class":"ERROR","message":"Unrecognized request"}"#)
            == .gpsdError(message: "Unrecognized request"))
        #expect(try decoder.decode(#"{"class":"VERSION","release":"3.22"}"#) == .version(release: "3.22"))
        #expect(try decoder.decode(#"{"class":"ERROR","message":"x"}"#) == .gpsdError(message: "x"))
    }

    @Test func timeIsRoundedToTheMillisecond() throws {
        #expect(try Self.fix(#"{"class":"TPV","mode":3,"time":"2026-05-10T07:35:07.1234567Z"}"#).time
            == Self.time("2026-05-10T07:35:07.123Z"))
        #expect(try Self.fix(#"{"class":"TPV","mode":3,"time":"2026-05-10T07:35:07.9996Z"}"#).time
            == Self.time("2026-05-10T07:35:08.000Z"))
        #expect(try Self.fix(#"{"class":"TPV","mode":3,"time":"2026-05-10T07:35:07Z"}"#).time
            == Self.time("2026-05-10T07:35:07.000Z"))
        // libgps writes {0, 0} for "no time"; the epoch itself is indistinguishable from that.
        #expect(try Self.fix(#"{"class":"TPV","mode":3,"time":"1970-01-01T00:00:00.000Z"}"#).time == nil)
    }

    @Test func nonFiniteNumbersBecomeNil() throws {
        let fix = try Self.fix(#"{"class":"TPV","mode":3,"lat":1e400,"lon":-1e400,"speed":1.5}"#)
        #expect(fix.latitude == nil && fix.longitude == nil)
        #expect(fix.speed == 1.5)
    }

    /// libgps itself accepts a line cut anywhere and returns what it had parsed.
    @Test func everyTruncationOfAReportIsMalformed() {
        let decoder = GPSDecoder()
        let bytes = Array(Self.fullTPV.utf8)
        for length in 1..<bytes.count {
            let cut = String(decoding: bytes[..<length], as: UTF8.self)
            do throws(GPSDecodeError) {
                let message = try decoder.decode(cut)
                Issue.record("\(cut): decoded as \(message)")
            } catch .malformed {
            } catch {
                Issue.record("\(cut): \(error)")
            }
        }
    }

    @Test(arguments: [
        #"{garbage"#,
        #"{garbage}"#,
        #"{}"#,
        #"{"class": "TPV","mode":3}"#,  // libgps only finds "class":"…" without a space
        #"{"class":"TPV","mode":3}}"#,
        #"{"class":"TPV","mode":3}{"class":"TPV","mode":2}"#,
        #"{"class":"TPV","mode":3]"#,
        "{\"class\":\"TPV\",\"device\":\"a\u{0}b\",\"mode\":3}",
        #"{"class":"TPV","device":"/dev/pts/1\"}"#,
        #"{"class":"TPV","mode":"3"}"#,
        #"{"class":"TPV","mode":3,"extra":[1,2]}"#,
        #"{"class":"VERSION","release":3.22}"#,
        #"{"class":"SKY","satellites":{"PRN":1}}"#,
    ])
    func malformed(_ line: String) {
        do throws(GPSDecodeError) {
            let message = try GPSDecoder().decode(line)
            Issue.record("decoded as \(message)")
        } catch .malformed(let reason) {
            #expect(!reason.isEmpty)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func libgpsRejectionNamesTheCode() {
        #expect(throws: GPSDecodeError.malformed(
            "libgps rejected the TPV object: saw quoted value when expecting nonstring (code 19)")
        ) {
            try GPSDecoder().decode(#"{"class":"TPV","mode":"3"}"#)
        }
    }

    @Test(arguments: [
        "",
        "   ",
        "\r\n",
        "$GPRMC,073000.00,A,4528.674663,N,00913.448594,E,0.231,229.5,100526,,,A*50",
        "gpspipe: could not connect to gpsd localhost:2947, Connection refused(-1)",
        "[1,2]",
        "x{\"class\":\"TPV\"}",
    ])
    func notJSON(_ line: String) {
        #expect(throws: GPSDecodeError.notJSON) { try GPSDecoder().decode(line) }
    }

    @Test func surroundingWhitespaceAndCRLFAreIgnored() throws {
        let decoder = GPSDecoder()
        #expect(try decoder.decode(" \t" + Self.fullTPV + "\r\n") == decoder.decode(Self.fullTPV))
    }

    @Test func stringSubstringAndBytesAgree() throws {
        let decoder = GPSDecoder()
        let expected = try decoder.decode(Self.fullTPV)
        #expect(try decoder.decode(Self.fullTPV[...]) == expected)
        let padded = "xx" + Self.fullTPV + "xx"
        #expect(try decoder.decode(padded.dropFirst(2).dropLast(2)) == expected)
        let fromBytes = try Array(Self.fullTPV.utf8).withUnsafeBufferPointer {
            (bytes) throws(GPSDecodeError) -> GPSMessage in try decoder.decode(utf8: bytes)
        }
        #expect(fromBytes == expected)
    }

    @Test(arguments: [
        (#"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#,
         GPSMessage.version(release: "3.22")),
        (#"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/1","activated":"2026-11-22T04:02:32.335Z","native":0,"bps":4800,"parity":"N","stopbits":1,"cycle":1.00}]}"#,
         .other(className: "DEVICES")),
        (#"{"class":"DEVICE","path":"/dev/pts/1","driver":"NMEA0183","activated":"2026-11-22T04:02:32.734Z","native":0,"bps":4800,"parity":"N","stopbits":1,"cycle":1.00}"#,
         .other(className: "DEVICE")),
        // gpsd 3.22 sends this when a device closes; its own libgps rejects "activated":0.
        (#"{"class":"DEVICE","path":"/dev/pts/1","activated":0}"#, .other(className: "DEVICE")),
        (#"{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false,"timing":false,"split24":false,"pps":false}"#,
         .other(className: "WATCH")),
        (#"{"class":"GST","device":"/dev/pts/5","rms":865.000,"major":2.500,"minor":2.400,"orient":125.000,"lat":0.980,"lon":1.000,"alt":3.000}"#,
         .other(className: "GST")),
        (#"{"class":"ERROR","message":"Unrecognized request 'FOO'"}"#,
         .gpsdError(message: "Unrecognized request 'FOO'")),
        (#"{"class":"NEWTHING","x":[1,{"y":2}]}"#, .other(className: "NEWTHING")),
    ])
    func classes(_ line: String, _ expected: GPSMessage) throws {
        #expect(try GPSDecoder().decode(line) == expected)
    }

    @Test func skyReport() throws {
        let line =
            #"{"class":"SKY","device":"/dev/pts/1","time":"2025-01-23T14:34:53.280Z","xdop":1.70,"hdop":2.40,"pdop":4.23,"nSat":3,"uSat":2,"satellites":[{"PRN":23,"el":6.5,"az":84.0,"ss":0.0,"used":false},{"PRN":8,"el":66.0,"az":189.0,"ss":44.6,"used":true},{"PRN":10,"el":51.0,"az":304.5,"ss":25.0,"used":true}]}"#
        #expect(
            try GPSDecoder().decode(line)
                == .sky(
                    SkyReport(
                        time: Self.time("2025-01-23T14:34:53.280Z"), hdop: 2.4, pdop: 4.23,
                        satellitesUsed: 2, satellitesSeen: 3)))
    }

    /// Longer than the decoder's initial 4 KB line buffer.
    @Test func longLinesGrowTheBuffer() throws {
        let satellites = (1...80).map {
            #"{"PRN":\#($0),"el":45.0,"az":180.0,"ss":40.0,"used":\#($0 % 2 == 0),"gnssid":0,"svid":\#($0)}"#
        }
        let line = #"{"class":"SKY","hdop":0.8,"satellites":["# + satellites.joined(separator: ",") + "]}"
        #expect(line.utf8.count > 4096)
        let decoder = GPSDecoder()
        #expect(
            try decoder.decode(line)
                == .sky(SkyReport(time: nil, hdop: 0.8, pdop: nil, satellitesUsed: 40, satellitesSeen: 80)))
        #expect(try Self.fix(Self.fullTPV, decoder).speed == 3.233)
    }

    /// Why the decoder allocates libgps' state once on the heap instead of per line.
    @Test func libgpsStateIsLarge() {
        #expect(GPSDecoder.libgpsStateSize >= 16 * 1024)
    }
}
