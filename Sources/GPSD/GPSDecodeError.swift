/// Why a line from gpsd (or a `gpspipe -w` log) did not decode.
public enum GPSDecodeError: Error, Sendable, Equatable {
    /// The line does not start with `{` after leading whitespace: NMEA, other text, or empty.
    /// Logs legitimately contain these; callers skip and count them.
    case notJSON
    /// The line starts with `{` but is not one complete JSON object with a readable "class"
    /// (truncated line, garbage), or libgps rejected a TPV, SKY, VERSION or ERROR object (e.g. a
    /// value of the wrong type). The text says why, with libgps' code when it gave one.
    case malformed(String)
}
