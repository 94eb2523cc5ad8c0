import Foundation
import Glibc
import PacerCore
import PacerTestSupport
import Synchronization
import Testing
@testable import SOS

/// A value shared between the test and the lane's thread or a channel's task.
final class Shared<Value: Sendable>: Sendable {
    private let state: Mutex<Value>
    init(_ value: Value) { state = Mutex(value) }
    var value: Value { state.withLock { $0 } }
    func update<R: Sendable>(_ body: (inout Value) -> R) -> R { state.withLock { body(&$0) } }
}

/// An alert channel that records every attempt and acknowledges it, or fails the first
/// `failFirst` attempts.
final class FakeChannel: AlertChannel {
    let name: AlertChannelName
    private let state: Mutex<(failuresLeft: Int, attempts: [Delivery], acknowledged: [Delivery])>
    /// The failures are the server refusing with this HTTP status.
    let rejectedStatus: Int?
    /// The first attempt never answers (a D-Bus call on a bus that went away, before the fix).
    let firstNeverAnswers: Bool

    init(_ name: AlertChannelName, failFirst: Int = 0, rejectedStatus: Int? = nil, firstNeverAnswers: Bool = false) {
        self.name = name
        self.rejectedStatus = rejectedStatus
        self.firstNeverAnswers = firstNeverAnswers
        state = Mutex((failFirst, [], []))
    }

    func deliver(_ delivery: Delivery, timeout: Duration) async -> Result<String, ChannelFailure> {
        let first = state.withLock { state in
            state.attempts.append(delivery)
            return state.attempts.count == 1
        }
        if first, firstNeverAnswers {
            // Far beyond the test's time limit: as good as never.
            try? await Task.sleep(for: .seconds(3600))
            return .failure(ChannelFailure("fake \(name.rawValue): cancelled"))
        }
        return state.withLock { state in
            guard state.failuresLeft == 0 else {
                state.failuresLeft -= 1
                return .failure(ChannelFailure("fake \(name.rawValue) failure, \(state.failuresLeft) left", rejectedStatus: rejectedStatus))
            }
            state.acknowledged.append(delivery)
            return .success("fake \(name.rawValue) ok")
        }
    }

    /// Every attempt so far, retries included, in the order they were made.
    var attempts: [Delivery] { state.withLock { $0.attempts } }
    /// The attempts this channel acknowledged.
    var acknowledged: [Delivery] { state.withLock { $0.acknowledged } }
}

/// A delivery's JSON body as a dictionary.
func json(_ body: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(body.utf8))
    return try #require(object as? [String: Any])
}

/// A throwaway delivery for channel tests (the memberwise initialiser is internal).
func makeDelivery(alertUUID: String = "0f8fad5b-d9cb-469f-a165-70867728950e", kind: String = "hr_high", test: Bool = false,
                  sequence: Int = 0, type: String = "alert", sms: String = "SOS: HIGH heart rate 201 bpm",
                  body: String = #"{"alert_id":"x"}"#, target: String = "/hook") -> Delivery {
    Delivery(key: .init(messageID: 1, channel: .hook, target: target), alertUUID: alertUUID, kind: kind, test: test,
             sequence: sequence, type: type, sms: sms, body: body, attempts: 0, lastError: nil, acknowledgedMs: nil)
}
