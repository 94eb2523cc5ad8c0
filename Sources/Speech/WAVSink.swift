import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Speech into 16-bit mono PCM RIFF WAV files: one file per utterance in a directory
/// (`0001-summary.wav`, `0002-speed_up.wav`: they sort in the order spoken and say what they
/// are), or every utterance into one given file. A file is complete (its header sizes patched)
/// once the utterance ends, also when it was interrupted: it then holds what was said.
public final class WAVSink: AudioSink {
    public enum Target: Sendable, Equatable {
        case directory(String)
        case file(String)
    }

    public let target: Target
    public var playsInRealTime: Bool { false }

    private struct State {
        var descriptor: Int32 = -1
        var path: String?
        var dataBytes: UInt64 = 0
        var nextNumber: Int
        var lastPath: String?
    }

    private let state: Mutex<State>

    /// One file per utterance in `directory`, created (one level, mode 0755) when missing.
    /// Numbering continues after the highest `NNNN-` already there, so a restart adds files
    /// instead of overwriting them.
    public init(directory: String) throws(SpeechError) {
        let path = directory.isEmpty ? "." : directory
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw .file(path: path, reason: "cannot create the directory: \(Self.errorText(errno))")
        }
        let highest = try Self.highestNumber(in: path)
        target = .directory(path)
        state = Mutex(State(nextNumber: highest + 1))
    }

    /// Every utterance into `file`, replacing what the previous one wrote.
    public init(file: String) {
        target = .file(file)
        state = Mutex(State(nextNumber: 1))
    }

    deinit {
        state.withLock { state in
            if state.descriptor >= 0 { close(state.descriptor) }
        }
    }

    /// The file of the latest utterance begun, if any.
    public var lastPath: String? { state.withLock { $0.lastPath } }

    public func begin(_ format: UtteranceFormat) throws(SpeechError) {
        try state.withLock { (state: inout State) throws(SpeechError) in
            if state.descriptor >= 0 {
                // An utterance that never got its `end`: keep what it wrote, as a valid file.
                Self.finalize(&state)
            }
            let path: String
            switch target {
            case .file(let file):
                path = file
            case .directory(let directory):
                path = directory + "/" + Self.padded(state.nextNumber) + "-" + Self.safeLabel(format.label) + ".wav"
                state.nextNumber += 1
            }
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw .file(path: path, reason: "cannot create: \(Self.errorText(errno))")
            }
            state.descriptor = descriptor
            state.path = path
            state.lastPath = path
            state.dataBytes = 0
            // Sizes are zero until `end` patches them; a reader of a file still being written
            // sees a valid, empty WAV rather than garbage.
            let header = Self.header(sampleRate: format.sampleRate, dataBytes: 0)
            try Self.writeAll(header, to: &state)
        }
    }

    public func write(_ samples: UnsafeBufferPointer<Int16>) throws(SpeechError) {
        guard !samples.isEmpty else { return }
        try state.withLock { (state: inout State) throws(SpeechError) in
            guard state.descriptor >= 0 else { return }
            #if _endian(big)
            let bytes = samples.flatMap { sample -> [UInt8] in
                let value = UInt16(bitPattern: sample)
                return [UInt8(value & 0xFF), UInt8(value >> 8)]
            }
            try Self.writeAll(bytes, to: &state)
            #else
            // WAV is little-endian, like the Pi and x86: the samples' memory is the file's bytes.
            try Self.writeAll(UnsafeRawBufferPointer(samples), to: &state)
            #endif
            state.dataBytes += UInt64(samples.count * 2)
        }
    }

    public func end(_ how: UtteranceEnd) throws(SpeechError) -> String? {
        try state.withLock { (state: inout State) throws(SpeechError) -> String? in
            guard state.descriptor >= 0 else { return state.path }
            let path = state.path
            if let problem = Self.finalize(&state) {
                throw .file(path: path ?? "?", reason: problem)
            }
            return path
        }
    }

    // MARK: The file

    /// Patches the RIFF and data sizes and closes the file; a problem doing so, if any.
    @discardableResult
    private static func finalize(_ state: inout State) -> String? {
        let descriptor = state.descriptor
        state.descriptor = -1
        var problem: String?
        let data = UInt32(clamping: state.dataBytes)
        let riff = UInt32(clamping: state.dataBytes + 36)
        for (value, offset) in [(riff, 4), (data, 40)] {
            var little = value.littleEndian
            let written = pwrite(descriptor, &little, 4, off_t(offset))
            if written != 4 {
                problem = "cannot finish the WAV header: \(errorText(written < 0 ? errno : EIO))"
                break
            }
        }
        if close(descriptor) != 0, problem == nil { problem = "cannot close: \(errorText(errno))" }
        return problem
    }

    private static func writeAll(_ bytes: [UInt8], to state: inout State) throws(SpeechError) {
        let problem = bytes.withUnsafeBytes { raw in writeAll(raw, descriptor: state.descriptor) }
        if let problem { throw .file(path: state.path ?? "?", reason: problem) }
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to state: inout State) throws(SpeechError) {
        if let problem = writeAll(bytes, descriptor: state.descriptor) {
            throw .file(path: state.path ?? "?", reason: problem)
        }
    }

    /// Writes everything (write(2) may take part of it); the problem, if any.
    private static func writeAll(_ bytes: UnsafeRawBufferPointer, descriptor: Int32) -> String? {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return "cannot write: \(errorText(errno))"
            }
            offset += written
        }
        return nil
    }

    /// The 44-byte header of a canonical PCM WAV: RIFF, fmt (PCM, 1 channel, 16 bit), data.
    static func header(sampleRate: Int, dataBytes: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(44)
        func text(_ s: StaticString) { bytes.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)) }
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        let rate = UInt32(clamping: sampleRate)
        text("RIFF"); u32(dataBytes &+ 36); text("WAVE")
        text("fmt "); u32(16); u16(1); u16(1); u32(rate); u32(rate * 2); u16(2); u16(16)
        text("data"); u32(dataBytes)
        return bytes
    }

    // MARK: Names

    /// At least four digits: 0001…9999, then 10000 and on (still in order by number).
    private static func padded(_ number: Int) -> String {
        let digits = String(number)
        return digits.count >= 4 ? digits : String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// The label as a safe file-name part: letters, digits, `_` and `-` only.
    private static func safeLabel(_ label: String) -> String {
        let kept = label.unicodeScalars.map { scalar -> Character in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "_", "-": Character(scalar)
            default: "_"
            }
        }
        return kept.isEmpty ? "speech" : String(kept)
    }

    /// The highest `NNNN` of the `NNNN-….wav` files in `directory` (0 when none).
    private static func highestNumber(in directory: String) throws(SpeechError) -> Int {
        guard let stream = opendir(directory) else {
            throw .file(path: directory, reason: "cannot read the directory: \(errorText(errno))")
        }
        defer { closedir(stream) }
        var highest = 0
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasSuffix(".wav"), let dash = name.firstIndex(of: "-"),
                let number = Int(name[..<dash]), number > highest
            else { continue }
            highest = number
        }
        return highest
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }
}
