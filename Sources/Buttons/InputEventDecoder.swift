/// Decodes the byte stream of an evdev device (`struct input_event` records, linux/input.h) into
/// the key events of interest. Records may arrive split across reads; the remainder waits for the
/// next one.
struct InputEventDecoder {
    /// `struct input_event`: a timeval (two C longs), then __u16 type, __u16 code, __s32 value.
    /// 24 bytes on 64-bit, 16 on 32-bit (where the kernel also uses 32-bit fields there).
    static let recordSize = 2 * MemoryLayout<Int>.size + 8

    static let eventSync: UInt16 = 0  // EV_SYN
    static let eventKey: UInt16 = 1  // EV_KEY
    static let syncReport: UInt16 = 0  // SYN_REPORT
    static let syncDropped: UInt16 = 3  // SYN_DROPPED

    let keyCodes: Set<UInt16>
    private var pending: [UInt8] = []
    /// After SYN_DROPPED the kernel's documentation says to drop everything up to the next
    /// SYN_REPORT: those events are an incomplete picture.
    private var discardingUntilReport = false

    init(keyCodes: Set<UInt16>) {
        self.keyCodes = keyCodes
    }

    /// `readTime` stamps the events unless `kernelTimestamps`, when the records' own times
    /// (CLOCK_MONOTONIC once EVIOCSCLOCKID succeeded) are used.
    mutating func decode(_ bytes: UnsafeRawBufferPointer, readTime: Duration, kernelTimestamps: Bool) -> [ButtonInput] {
        pending.append(contentsOf: bytes)
        let size = Self.recordSize
        let complete = pending.count / size * size
        guard complete > 0 else { return [] }
        var inputs: [ButtonInput] = []
        pending.withUnsafeBytes { raw in
            var offset = 0
            while offset < complete {
                if let input = record(raw, at: offset, readTime: readTime, kernelTimestamps: kernelTimestamps) {
                    inputs.append(input)
                }
                offset += size
            }
        }
        pending.removeFirst(complete)
        return inputs
    }

    /// Forgets a partial record and a pending resynchronisation (the device was reopened).
    mutating func reset() {
        pending.removeAll()
        discardingUntilReport = false
    }

    private mutating func record(
        _ raw: UnsafeRawBufferPointer, at offset: Int, readTime: Duration, kernelTimestamps: Bool
    ) -> ButtonInput? {
        let word = MemoryLayout<Int>.size
        let type = raw.loadUnaligned(fromByteOffset: offset + 2 * word, as: UInt16.self)
        let code = raw.loadUnaligned(fromByteOffset: offset + 2 * word + 2, as: UInt16.self)
        let value = raw.loadUnaligned(fromByteOffset: offset + 2 * word + 4, as: Int32.self)
        if type == Self.eventSync {
            if code == Self.syncDropped {
                discardingUntilReport = true
                return .eventsDropped
            }
            if code == Self.syncReport { discardingUntilReport = false }
            return nil
        }
        guard !discardingUntilReport, type == Self.eventKey, keyCodes.contains(code), value == 0 || value == 1 else {
            return nil
        }
        var time = readTime
        if kernelTimestamps {
            let seconds = raw.loadUnaligned(fromByteOffset: offset, as: Int.self)
            let microseconds = raw.loadUnaligned(fromByteOffset: offset + word, as: Int.self)
            time = .seconds(Int64(seconds)) + .microseconds(Int64(microseconds))
        }
        return .key(EvdevKeyEvent(code: code, value: value, time: time))
    }
}
