import Threads
import Glibc

/// The body of the reader's thread: open, read until the device is lost, retry, until stopped.
/// Owns its state; nothing else touches it.
final class ReadLoop {
    private let configuration: EvdevButtonReader.Configuration
    private let continuation: AsyncStream<ButtonInput>.Continuation
    private let wake: WakeChannel
    private var decoder: InputEventDecoder
    /// The cause last reported as `.deviceUnavailable`, so retries failing the same way stay quiet.
    private var reportedCause: String?

    /// EVIOCSCLOCKID = _IOW('E', 0xa0, int): report event times on the given clock.
    private static let setClockID = UInt(0x4004_45a0)

    init(configuration: EvdevButtonReader.Configuration, continuation: AsyncStream<ButtonInput>.Continuation, wake: WakeChannel) {
        self.configuration = configuration
        self.continuation = continuation
        self.wake = wake
        decoder = InputEventDecoder(keyCodes: configuration.keyCodes)
    }

    func run() {
        let path = configuration.devicePath
        var delay = configuration.firstRetryDelay
        running: while !wake.wait(timeout: .zero) {
            switch open(path) {
            case .failure(let cause):
                report(cause)
                if wake.wait(timeout: delay) { break running }
                delay = min(delay * 2, configuration.maximumRetryDelay)
            case .success(let (descriptor, kernelTimestamps)):
                reportedCause = nil
                decoder.reset()
                continuation.yield(.deviceOpened(path: path, kernelTimestamps: kernelTimestamps))
                let (lost, readSomething) = read(descriptor, kernelTimestamps: kernelTimestamps)
                close(descriptor)
                guard let lost else { break running }  // stopped
                report(lost)
                // A device that worked starts the backoff again; one that fails as soon as it is
                // opened keeps backing off, so it cannot flood the log.
                delay = readSomething ? configuration.firstRetryDelay : min(delay * 2, configuration.maximumRetryDelay)
                // Not at once: an unplugged device's node may linger for a moment.
                if wake.wait(timeout: delay) { break running }
            }
        }
        continuation.finish()
    }

    private struct Failure: Error {
        var cause: String
    }

    private func report(_ failure: Failure) { report(failure.cause) }

    private func report(_ cause: String) {
        guard cause != reportedCause else { return }
        reportedCause = cause
        continuation.yield(.deviceUnavailable(path: configuration.devicePath, reason: cause))
    }

    /// Opens the device non-blocking (poll decides when to read, so a stop is never stuck in a
    /// read or in opening a FIFO without a writer) and asks for CLOCK_MONOTONIC event times.
    private func open(_ path: String) -> Result<(Int32, Bool), Failure> {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            return .failure(Failure(cause: "cannot open: \(errorDescription(errno))"))
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let cause = "cannot stat: \(errorDescription(errno))"
            close(descriptor)
            return .failure(Failure(cause: cause))
        }
        let kind = status.st_mode & S_IFMT
        // A regular file would be read to its end and then again on every reopen.
        guard kind == S_IFCHR || kind == S_IFIFO else {
            close(descriptor)
            return .failure(Failure(cause: "not an input device (neither a character device nor a FIFO)"))
        }
        // Fails with ENOTTY on a FIFO, and on kernels or drivers without it: read times then.
        var clock = CLOCK_MONOTONIC
        let kernelTimestamps = withUnsafeMutablePointer(to: &clock) { ioctl(descriptor, Self.setClockID, $0) } == 0
        return .success((descriptor, kernelTimestamps))
    }

    /// Reads until the device is lost (returns why) or the reader is stopped (returns nil), and
    /// whether any bytes came before that.
    private func read(_ descriptor: Int32, kernelTimestamps: Bool) -> (lost: Failure?, readSomething: Bool) {
        var readSomething = false
        var entries = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0),
        ]
        // 64 records per read: far more than a button produces between two wake-ups.
        var buffer = [UInt8](repeating: 0, count: 64 * InputEventDecoder.recordSize)
        while true {
            entries[0].revents = 0
            entries[1].revents = 0
            if poll(&entries, 2, -1) < 0 {
                if errno == EINTR { continue }
                return (Failure(cause: "poll failed: \(errorDescription(errno))"), readSomething)
            }
            if entries[1].revents != 0 { return (nil, readSomething) }
            let events = entries[0].revents
            if events & Int16(POLLNVAL) != 0 { return (Failure(cause: "the device descriptor became invalid"), readSomething) }
            guard events != 0 else { continue }
            // Drain what is there; POLLHUP/POLLERR surface as end of file or a read error.
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    readSomething = true
                    let readTime = MonotonicTime.now()
                    let inputs = buffer.withUnsafeBytes {
                        decoder.decode(UnsafeRawBufferPointer(rebasing: $0[0..<count]), readTime: readTime, kernelTimestamps: kernelTimestamps)
                    }
                    for input in inputs { continuation.yield(input) }
                    continue
                }
                if count == 0 { return (Failure(cause: "end of file (the device or the FIFO's writer went away)"), readSomething) }
                let error = errno
                if error == EAGAIN || error == EWOULDBLOCK { break }
                if error == EINTR { continue }
                // ENODEV: unplugged.
                return (Failure(cause: "read failed: \(errorDescription(error))"), readSomething)
            }
        }
    }
}
