import PacerCore


/// Coordinates, numbers and text as both writers put them into XML.
enum ExportText {
    /// Degrees with 7 decimals (about 1 cm). A longitude that rounds to +180 is written as −180
    /// (the same meridian), since GPX's `longitudeType` excludes +180.
    static func degrees(_ value: Double, isLongitude: Bool) -> String {
        guard let parts = FixedDecimal.split(value, decimals: 7) else {
            preconditionFailure("ExportText.degrees: coordinate not validated")
        }
        let antimeridian = isLongitude && !parts.negative && parts.whole == 180 && parts.fraction == 0
        return FixedDecimal.render(negative: parts.negative || antimeridian, whole: parts.whole,
                                   fraction: parts.fraction, decimals: 7)
    }

    /// True when `coordinate` can be written: finite, latitude in −90…90, longitude in −180…180.
    static func isValid(_ coordinate: Coordinate) -> Bool {
        coordinate.latitude.isFinite && coordinate.longitude.isFinite
            && (-90.0...90.0).contains(coordinate.latitude)
            && (-180.0...180.0).contains(coordinate.longitude)
    }

    /// Heart rates a reader accepts as data: TCX's type is an unsigned byte of at least 1, and
    /// some devices write 255 for "no reading".
    static let heartRates = 1...254

    /// A heart rate in bpm rounded to a whole number, when it is in `heartRates`.
    static func heartRate(_ bpm: Double?) -> Int? {
        guard let bpm, bpm.isFinite else { return nil }
        let rounded = bpm.rounded(.toNearestOrAwayFromZero)
        guard rounded >= Double(heartRates.lowerBound), rounded <= Double(heartRates.upperBound) else { return nil }
        return Int(rounded)
    }

    static func heartRate(_ bpm: Int?) -> Int? {
        guard let bpm, heartRates.contains(bpm) else { return nil }
        return bpm
    }

    /// `text` as XML character data or attribute value: `& < > " '` as entities, CR as a
    /// character reference (parsers would turn a raw one into LF), and characters XML 1.0 does
    /// not allow (C0 controls other than tab and LF, U+FFFE, U+FFFF) as U+FFFD.
    static func escaped(_ text: String) -> String {
        var needsWork = false
        for scalar in text.unicodeScalars where needsEscape(scalar) {
            needsWork = true
            break
        }
        guard needsWork else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\r": result += "&#13;"
            case "\t", "\n": result.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    result += "\u{FFFD}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x26, 0x3C, 0x3E, 0x22, 0x27: true
        case 0x09, 0x0A: false
        case 0..<0x20, 0xFFFE, 0xFFFF: true
        default: false
        }
    }
}
