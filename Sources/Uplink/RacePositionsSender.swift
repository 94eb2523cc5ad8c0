import FoundationEssentials
import HTTPClient
import PacerContract
import PacerCore
import Store

/// What the cloud answered to a race's positions, for race mode (the daemon hands it to the session).
public enum RaceAnswer: Sendable, Equatable {
    /// Taken: the reply, with the runner's place when the race ranks them.
    case accepted(RacePositionsReply)
    /// The race refuses this device's positions for good (404: not enrolled, or no such race):
    /// every position of it is set aside, and those queued later too.
    case refused(String)
}

extension UplinkEngine {
    /// Keeps a race position in the store until the cloud takes it. True when queued (the round
    /// that sends it may go now).
    mutating func queue(_ position: RacePositionRecord) -> Bool {
        guard let store = openStore() else { return false }
        do {
            if let why = refusedRaces[position.raceID] {
                try store.queueRacePosition(position)
                try store.setAsideRacePositions(raceID: position.raceID, error: why, at: Self.wallNow())
                return false
            }
            try store.queueRacePosition(position)
            return settings.url != nil
        } catch {
            log(.warning, "upload: cannot keep a race position: \(error)")
            return false
        }
    }

    /// Race positions, before the runs' backlog: the newest alone first (the leaderboard shows
    /// where the runner is now), then what waits, oldest first, in batches of at most
    /// `RaceWire.maxPositions`, each deleted once the cloud acknowledged it. A batch the cloud
    /// refuses for good is set aside (a 404: every position of that race). False when a failure
    /// ended the round (`round` says when to retry).
    mutating func sendRacePositions(_ store: RunStore, session: HTTPSession, url: String, timeout: Duration, round: inout UplinkRound) -> Bool {
        var newestFirst = true
        while true {
            let batch: [RacePositionRecord]
            do {
                if newestFirst {
                    batch = try store.newestRacePosition().map { [$0] } ?? []
                } else {
                    batch = try store.oldestRacePositions(limit: RaceWire.maxPositions)
                }
            } catch {
                log(.error, "upload: cannot read the race positions: \(error)")
                round.retryAfterSeconds = settings.retry.capSeconds
                return false
            }
            newestFirst = false
            guard let first = batch.first else { return true }
            let raceID = first.raceID
            let what = batch.count == 1 ? "a position of race \(raceID)" : "\(batch.count) positions of race \(raceID)"
            if let why = refusedRaces[raceID] {
                do { try store.setAsideRacePositions(raceID: raceID, error: why, at: Self.wallNow()) } catch {
                    log(.error, "upload: cannot set aside the positions of race \(raceID): \(error)")
                    round.retryAfterSeconds = settings.retry.capSeconds
                    return false
                }
                continue
            }
            let body = Self.body(batch)
            var headers: [(String, String)] = [("Content-Type", "application/json"), ("Accept", "application/json")]
            if let token = settings.token { headers.append(("Authorization", "Bearer \(token)")) }
            let request = HTTPRequest(method: "POST", url: url + "/v1/races/\(raceID)/positions", headers: headers, body: body, timeout: timeout,
                                      connectTimeout: min(timeout, .seconds(10)))
            let failuresBefore = wokenSinceFailure ? 0 : failures
            let verdict: UploadVerdict
            var problem: String?
            var reply: RacePositionsReply?
            var tooManyRequests = false
            do {
                let response = try session.perform(request)
                problem = response.isSuccess ? nil : "HTTP \(response.status)" + Self.said(response)
                tooManyRequests = response.status == 429
                if response.isSuccess { reply = try? JSONDecoder().decode(RacePositionsReply.self, from: Data(response.body)) }
                verdict = UploadVerdict.decide(status: response.status, retryAfter: response.header("Retry-After"), failures: failuresBefore + 1,
                                               schedule: settings.retry, random: Double.random(in: 0..<1), now: Self.wallNow())
                if response.status == 404 { refusedRaces[raceID] = problem ?? "HTTP 404" }
            } catch {
                problem = "\(error)"
                verdict = UploadVerdict.decide(status: nil, retryAfter: nil, failures: failuresBefore + 1, schedule: settings.retry,
                                               random: Double.random(in: 0..<1), now: Self.wallNow())
            }
            if verdict.isSettled { settled(url) }
            switch verdict {
            case .accepted:
                do { try store.acknowledgeRacePositions(batch.map(\.id)) } catch {
                    // Sent but not noted: they go again (the cloud keeps each position once).
                    log(.error, "upload: \(what) accepted but could not be noted: \(error)")
                    round.retryAfterSeconds = settings.retry.capSeconds
                    return false
                }
                round.sent += 1
                round.bytes += body.count
                onRace(raceID, .accepted(reply ?? RacePositionsReply(stored: 0)))
            case .setAside:
                let reason = problem ?? "refused"
                do {
                    if refusedRaces[raceID] != nil {
                        try store.setAsideRacePositions(raceID: raceID, error: reason, at: Self.wallNow())
                    } else {
                        try store.setAsideRacePositions(ids: batch.map(\.id), error: reason, at: Self.wallNow())
                    }
                } catch {
                    log(.error, "upload: cannot set aside \(what), refused by the server (\(reason)): \(error)")
                    round.failure = reason
                    round.retryAfterSeconds = settings.retry.capSeconds
                    return false
                }
                if refusedRaces[raceID] != nil {
                    log(.warning, "upload: race \(raceID) refuses this device's positions: \(reason); they are set aside, not retried "
                        + "(is the runner enrolled? was the race deleted?)")
                    onRace(raceID, .refused(reason))
                } else if reason != lastRaceRefusal {
                    log(.warning, "upload of \(what) refused by the server: \(reason); set aside, not retried")
                }
                lastRaceRefusal = reason
                round.setAside.append(reason)
            case .retry(let delay):
                failed(what, problem ?? "HTTP ?", delay: delay, failuresBefore: failuresBefore, tooManyRequests: tooManyRequests, round: &round)
                return false
            }
        }
    }

    /// `RacePositions`, sorted keys: the batch, oldest first, with the newest crossings it knows.
    static func body(_ batch: [RacePositionRecord]) -> [UInt8] {
        let positions = batch.map { RacePositionItem(time: $0.time.iso8601, lat: $0.latitude, lon: $0.longitude, progress_m: $0.progress) }
        let body = RacePositions(positions: positions, started_at: batch.compactMap(\.startedAt).last?.iso8601,
                                 finished_at: batch.compactMap(\.finishedAt).last?.iso8601)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(body)).map { [UInt8]($0) } ?? Array("{}".utf8)
    }
}
