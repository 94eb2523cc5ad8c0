internal import CEspeakNG

/// How cues sound: the `[voice]` settings handed to espeak-ng.
public struct SpeechSettings: Sendable, Equatable {
    /// An espeak-ng voice or language name ("en", "en-us", "en-gb-x-rp", "de").
    public var voice: String
    /// Speaking rate in words per minute (espeakRATE).
    public var wordsPerMinute: Int
    /// Loudness in percent of espeak-ng's normal (espeakVOLUME); above 100 may clip.
    public var volumePercent: Int

    public static let wordsPerMinuteRange = Int(espeakRATE_MINIMUM)...Int(espeakRATE_MAXIMUM)
    public static let volumeRange = 0...200

    /// 175 words per minute is espeakRATE_NORMAL.
    public init(voice: String = "en", wordsPerMinute: Int = 175, volumePercent: Int = 100) {
        self.voice = voice
        self.wordsPerMinute = wordsPerMinute
        self.volumePercent = volumePercent
    }

    /// Rejects values espeak-ng would silently clamp or misread, with a sentence saying which.
    public func validate() throws(SpeechError) {
        if voice.isEmpty || voice.utf8.contains(0) || voice.utf8.count > 100 {
            throw .invalidSetting("voice: \"\(voice)\" is not a voice name")
        }
        guard Self.wordsPerMinuteRange.contains(wordsPerMinute) else {
            throw .invalidSetting("rate: \(wordsPerMinute) words per minute is outside \(Self.wordsPerMinuteRange.lowerBound)-\(Self.wordsPerMinuteRange.upperBound)")
        }
        guard Self.volumeRange.contains(volumePercent) else {
            throw .invalidSetting("volume: \(volumePercent) % is outside \(Self.volumeRange.lowerBound)-\(Self.volumeRange.upperBound)")
        }
    }
}
