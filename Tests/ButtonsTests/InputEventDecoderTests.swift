import Testing
@testable import Buttons

@Suite(.timeLimit(.minutes(10))) struct InputEventDecoderTests {
    private typealias R = InputEventRecords

    private func decode(_ decoder: inout InputEventDecoder, _ bytes: [UInt8], readTime: Duration = .seconds(7), kernel: Bool = false) -> [ButtonInput] {
        bytes.withUnsafeBytes { decoder.decode($0, readTime: readTime, kernelTimestamps: kernel) }
    }

    @Test func theRecordSizeIsTheKernels() {
        // 24 bytes on 64-bit Linux (struct timeval of two longs, 2 + 2 + 4).
        #expect(InputEventDecoder.recordSize == 2 * MemoryLayout<Int>.size + 8)
        #expect(R.key(28, 1).count == InputEventDecoder.recordSize)
    }

    @Test func keysOfInterestPassAndEverythingElseIsDropped() {
        var decoder = InputEventDecoder(keyCodes: [28, 256])
        var bytes = R.key(28, 1) + R.synReport
        bytes += R.key(30, 1)  // KEY_A: not configured
        bytes += R.record(type: 2, code: 28, value: 1)  // EV_REL with a key's code: not a key
        bytes += R.record(type: 4, code: 4, value: 28)  // EV_MSC scan code
        bytes += R.key(28, 2)  // autorepeat
        bytes += R.key(28, 0) + R.key(256, 1) + R.key(256, 0) + R.synReport
        let inputs = decode(&decoder, bytes)
        #expect(inputs == [
            .key(EvdevKeyEvent(code: 28, value: 1, time: .seconds(7))),
            .key(EvdevKeyEvent(code: 28, value: 0, time: .seconds(7))),
            .key(EvdevKeyEvent(code: 256, value: 1, time: .seconds(7))),
            .key(EvdevKeyEvent(code: 256, value: 0, time: .seconds(7))),
        ])
    }

    @Test func kernelTimestampsAreUsedWhenTheDeviceGivesMonotonicOnes() {
        var decoder = InputEventDecoder(keyCodes: [28])
        let bytes = R.key(28, 1, seconds: 12_345, microseconds: 678_901) + R.key(28, 0, seconds: 12_346, microseconds: 5)
        let inputs = decode(&decoder, bytes, kernel: true)
        #expect(inputs == [
            .key(EvdevKeyEvent(code: 28, value: 1, time: .seconds(12_345) + .microseconds(678_901))),
            .key(EvdevKeyEvent(code: 28, value: 0, time: .seconds(12_346) + .microseconds(5))),
        ])
    }

    @Test func aRecordSplitAcrossReadsIsReassembled() {
        var decoder = InputEventDecoder(keyCodes: [256])
        let bytes = R.key(256, 1, seconds: 1) + R.key(256, 0, seconds: 2)
        // Every split point, including one byte at a time.
        for split in 1..<bytes.count {
            var decoder = InputEventDecoder(keyCodes: [256])
            let first = decode(&decoder, Array(bytes[..<split]), kernel: true)
            let second = decode(&decoder, Array(bytes[split...]), kernel: true)
            #expect((first + second).count == 2, "split at \(split)")
            #expect(first + second == [
                .key(EvdevKeyEvent(code: 256, value: 1, time: .seconds(1))),
                .key(EvdevKeyEvent(code: 256, value: 0, time: .seconds(2))),
            ])
        }
        var inputs: [ButtonInput] = []
        for byte in bytes { inputs += decode(&decoder, [byte], kernel: true) }
        #expect(inputs.count == 2)
    }

    @Test func afterDroppedEventsEverythingUpToTheNextReportIsIgnored() {
        var decoder = InputEventDecoder(keyCodes: [28])
        let bytes = R.key(28, 1) + R.synDropped + R.key(28, 0) + R.key(28, 1) + R.synReport + R.key(28, 0)
        #expect(decode(&decoder, bytes) == [
            .key(EvdevKeyEvent(code: 28, value: 1, time: .seconds(7))),
            .eventsDropped,
            .key(EvdevKeyEvent(code: 28, value: 0, time: .seconds(7))),
        ])
    }

    @Test func resetDropsAPartialRecordAndAPendingResync() {
        var decoder = InputEventDecoder(keyCodes: [28])
        #expect(decode(&decoder, R.synDropped) == [.eventsDropped])
        #expect(decode(&decoder, Array(R.key(28, 1)[..<5])).isEmpty)
        decoder.reset()
        #expect(decode(&decoder, R.key(28, 0)) == [.key(EvdevKeyEvent(code: 28, value: 0, time: .seconds(7)))])
    }
}
