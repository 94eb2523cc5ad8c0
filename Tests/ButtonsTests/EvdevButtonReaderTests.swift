import Glibc
import PacerCore
import PacerTestSupport
import Testing
import Threads
@testable import Buttons

/// The reader against a FIFO standing in for /dev/input/eventN (no uinput in the test container):
/// the test writes packed input_event records into it.
@Suite(.timeLimit(.minutes(10))) struct EvdevButtonReaderTests {
    private typealias R = InputEventRecords

    private func reader(_ path: String, firstRetry: Duration = .milliseconds(10), maximumRetry: Duration = .milliseconds(50)) -> EvdevButtonReader {
        EvdevButtonReader(configuration: .init(
            devicePath: path, keyCodes: [28, 256], firstRetryDelay: firstRetry, maximumRetryDelay: maximumRetry))
    }

    @Test func theDefaultsAreTheConfigFilesAndTheBackoffCapIsTwoSeconds() {
        let configuration = EvdevButtonReader.Configuration(devicePath: "/dev/input/event0")
        #expect(configuration.keyCodes == [28, 256])
        #expect(configuration.maximumRetryDelay == .seconds(2))
    }

    @Test func keysOfTheConfiguredCodesArriveAndOthersDoNot() async throws {
        let fifo = try FIFOFixture()
        try fifo.makeFIFO()
        let reader = reader(fifo.path)
        let collector = InputCollector(reader)
        reader.start()
        defer { reader.stop() }
        try #require(await collector.wait { $0.opened == 1 })
        #expect(collector.inputs == [.deviceOpened(path: fifo.path, kernelTimestamps: false)])

        try fifo.openWriter()
        let before = MonotonicTime.now()
        var bytes = R.key(28, 1) + R.synReport + R.key(30, 1) + R.record(type: 2, code: 28, value: 1) + R.key(28, 2)
        bytes += R.key(28, 0) + R.synReport + R.key(256, 1) + R.key(256, 0) + R.synReport
        try fifo.write(bytes)
        try #require(await collector.wait { $0.keys.count == 4 })
        let after = MonotonicTime.now()

        let keys = collector.keys
        #expect(keys.map(\.code) == [28, 28, 256, 256])
        #expect(keys.map(\.value) == [1, 0, 1, 0])
        // A FIFO takes no EVIOCSCLOCKID: the times are the read times, on CLOCK_MONOTONIC.
        for key in keys { #expect(key.time >= before && key.time <= after) }
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0.time <= $1.time })
        // Nothing else came out of the ignored records.
        #expect(collector.inputs.count == 5)
    }

    @Test func aRecordSplitAcrossWritesIsReassembled() async throws {
        let fifo = try FIFOFixture()
        try fifo.makeFIFO()
        let reader = reader(fifo.path)
        let collector = InputCollector(reader)
        reader.start()
        defer { reader.stop() }
        try #require(await collector.wait { $0.opened == 1 })
        try fifo.openWriter()

        let press = R.key(256, 1)
        try fifo.write(Array(press[..<10]))
        // Give the reader the chance to read the first part on its own.
        try await Task.sleep(for: .milliseconds(50))
        #expect(collector.keys.isEmpty)
        try fifo.write(Array(press[10...]) + R.key(256, 0))
        try #require(await collector.wait { $0.keys.count == 2 })
        #expect(collector.keys.map(\.code) == [256, 256])
        #expect(collector.keys.map(\.value) == [1, 0])
    }

    @Test func theWriterClosingIsReportedAndTheDeviceReopened() async throws {
        let fifo = try FIFOFixture()
        try fifo.makeFIFO()
        let reader = reader(fifo.path)
        let collector = InputCollector(reader)
        reader.start()
        defer { reader.stop() }
        try #require(await collector.wait { $0.opened == 1 })
        try fifo.openWriter()
        try fifo.write(R.key(28, 1))
        fifo.closeWriter()

        try #require(await collector.wait { $0.opened == 2 })
        let reasons = collector.unavailableReasons
        #expect(reasons.count == 1)
        #expect(reasons.first?.contains("end of file") == true)
        // The press written before the close was read first.
        #expect(collector.keys.map(\.value) == [1])

        try fifo.openWriter()
        try fifo.write(R.key(28, 0))
        try #require(await collector.wait { $0.keys.count == 2 })
        #expect(collector.keys.map(\.value) == [1, 0])
        #expect(collector.inputs.map(\.kind) == ["opened", "key", "unavailable", "opened", "key"])
    }

    @Test func aMissingDeviceIsRetriedUntilItAppearsAndReportedOnce() async throws {
        let fifo = try FIFOFixture()
        let reader = reader(fifo.path)
        let collector = InputCollector(reader)
        reader.start()
        defer { reader.stop() }
        try #require(await collector.wait { $0.unavailableReasons.count == 1 })
        #expect(collector.unavailableReasons.first?.contains("No such file or directory") == true)
        // Many retries (every 10-50 ms) go by without another report.
        try await Task.sleep(for: .milliseconds(300))
        #expect(collector.inputs.count == 1)

        try fifo.makeFIFO()
        try #require(await collector.wait { $0.opened == 1 })
        try fifo.openWriter()
        try fifo.write(R.key(256, 1))
        try #require(await collector.wait { $0.keys.count == 1 })
        #expect(collector.inputs.map(\.kind) == ["unavailable", "opened", "key"])
    }

    @Test func eachNewCauseIsReportedAgain() async throws {
        let fifo = try FIFOFixture()
        let reader = reader(fifo.path)
        let collector = InputCollector(reader)
        reader.start()
        defer { reader.stop() }
        try #require(await collector.wait { $0.unavailableReasons.count == 1 })

        // A regular file where the device should be: read to its end again on every reopen.
        let file = open(fifo.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try #require(file >= 0)
        let record = R.key(28, 1)
        _ = record.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        close(file)
        try #require(await collector.wait { $0.unavailableReasons.count == 2 })
        #expect(collector.unavailableReasons.last?.contains("not an input device") == true)
        // Retries of the same cause stay quiet.
        try await Task.sleep(for: .milliseconds(200))
        #expect(collector.unavailableReasons.count == 2)

        unlink(fifo.path)
        try fifo.makeFIFO()
        try #require(await collector.wait { $0.opened == 1 })
        #expect(collector.keys.isEmpty)
        #expect(collector.unavailableReasons.count == 2)
    }

    @Test func stopEndsTheThreadWhileItWaitsForInput() async throws {
        let fifo = try FIFOFixture()
        try fifo.makeFIFO()
        let reader = reader(fifo.path)
        let collector = InputCollector(reader)
        reader.start()
        try #require(await collector.wait { $0.opened == 1 })
        try fifo.openWriter()
        reader.stop()
        #expect(await collector.wait { $0.finished })
        // The thread closed its end of the FIFO.
        #expect(await collector.wait { _ in fifo.readerHasClosed })
        reader.stop()  // again: nothing happens
    }

    @Test func stopEndsTheThreadDuringABackoffWait() async throws {
        let fifo = try FIFOFixture()
        // A first retry far longer than the wait below: only the wake-up can end it in time.
        let reader = reader(fifo.path, firstRetry: .seconds(60), maximumRetry: .seconds(60))
        let collector = InputCollector(reader)
        reader.start()
        try #require(await collector.wait { $0.unavailableReasons.count == 1 })
        reader.stop()
        #expect(await collector.wait(timeout: .seconds(20)) { $0.finished })
    }

    @Test func endingTheConsumerStopsTheReader() async throws {
        let fifo = try FIFOFixture()
        try fifo.makeFIFO()
        let reader = reader(fifo.path)
        let collector = InputCollector(reader)
        reader.start()
        try #require(await collector.wait { $0.opened == 1 })
        try fifo.openWriter()
        collector.cancel()
        #expect(await collector.wait { _ in fifo.readerHasClosed })
    }

    @Test func stopBeforeStartFinishesTheStreamAndStartThenDoesNothing() async throws {
        let fifo = try FIFOFixture()
        try fifo.makeFIFO()
        let reader = reader(fifo.path)
        let collector = InputCollector(reader)
        reader.stop()
        reader.start()
        #expect(await collector.wait { $0.finished })
        #expect(collector.inputs.isEmpty)
    }

    @Test func startingTwiceStartsOneThread() async throws {
        let fifo = try FIFOFixture()
        try fifo.makeFIFO()
        let reader = reader(fifo.path)
        let collector = InputCollector(reader)
        reader.start()
        reader.start()
        defer { reader.stop() }
        try #require(await collector.wait { $0.opened >= 1 })
        try fifo.openWriter()
        try fifo.write(R.key(28, 1))
        try #require(await collector.wait { $0.keys.count >= 1 })
        try await Task.sleep(for: .milliseconds(50))
        // A second thread would have opened the FIFO (and read its share) too.
        #expect(collector.opened == 1)
        #expect(collector.keys.count == 1)
    }

    /// The whole path the daemon uses: FIFO → reader → gesture classifier.
    @Test func aPressThroughTheReaderBecomesAGesture() async throws {
        let fifo = try FIFOFixture()
        try fifo.makeFIFO()
        let reader = reader(fifo.path)
        let collector = InputCollector(reader)
        reader.start()
        defer { reader.stop() }
        try #require(await collector.wait { $0.opened == 1 })
        try fifo.openWriter()
        // Timed on a thread of its own: a Task.sleep can overshoot by seconds while other tests
        // keep the cooperative pool busy, and the FIFO's events are timed when read.
        let descriptor = fifo.writer
        try await offPool {
            let down = R.key(256, 1), up = R.key(256, 0)
            _ = down.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            usleep(100_000)
            _ = up.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }
        try #require(await collector.wait { $0.keys.count == 2 })

        var classifier = ButtonGestureClassifier()
        var gestures: [ButtonGestureEvent] = []
        for key in collector.keys {
            guard let action = ButtonKeyEvent.Action(evdevValue: key.value) else { continue }
            gestures += classifier.handle(ButtonKeyEvent(keyCode: key.code, action: action, time: key.time))
        }
        gestures += classifier.advance(to: try #require(classifier.nextDeadline))
        #expect(gestures.map(\.gesture) == [.shortPress])
        #expect(gestures.map(\.keyCode) == [256])
    }
}

extension ButtonInput {
    var kind: String {
        switch self {
        case .key: "key"
        case .deviceOpened: "opened"
        case .deviceUnavailable: "unavailable"
        case .eventsDropped: "dropped"
        }
    }
}
