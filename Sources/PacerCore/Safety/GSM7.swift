/// The GSM 03.38 default alphabet. An SMS in it holds 160 characters; one character outside it
/// switches the whole message to UCS-2 and 70 characters. The extension table (€ [ ] { } ^ ~ \ |)
/// costs two septets each and some phones render it badly, so alert texts use only the basic set.
public enum GSM7 {
    public static let maximumSeptets = 160

    /// The basic set, by Unicode scalar.
    public static let basic: Set<Unicode.Scalar> = {
        var set = Set<Unicode.Scalar>()
        for scalar in "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./:;<=>?¡ÄÖÑÜ§¿äöñüà".unicodeScalars {
            set.insert(scalar)
        }
        for v in UInt32(0x30)...0x39 { set.insert(Unicode.Scalar(v)!) }
        for v in UInt32(0x41)...0x5A { set.insert(Unicode.Scalar(v)!) }
        for v in UInt32(0x61)...0x7A { set.insert(Unicode.Scalar(v)!) }
        return set
    }()

    public static func isBasic(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy(basic.contains)
    }

    /// Fits one SMS of the basic set.
    public static func fitsOneMessage(_ text: String) -> Bool {
        isBasic(text) && text.unicodeScalars.count <= maximumSeptets
    }

    /// Text from outside (a device name) made safe: unknown characters become "?", at most
    /// `limit` characters.
    public static func sanitized(_ text: String, limit: Int) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars.prefix(limit) {
            out.append(basic.contains(scalar) && scalar != "\n" && scalar != "\r" ? scalar : "?")
        }
        return String(out)
    }
}
