import CloudModel
import CloudStore
import Foundation
import PacerContract

/// What the runner's pages read of a run beyond its summary: its view (map, splits, charts,
/// zones: `RunView`) and its figures (`RunFigures`, what the statistics and heart-rate pages
/// add up), each computed once from the track on `heavyWork` and stored. Shared by the device's
/// uploads and the import (which complete runs) and the run, statistics and heart-rate pages
/// (which read them).
struct RunAnalysis: Sendable {
    let runs: RunRepository
    let health: HealthRepository
    /// Imports' reading and run views' computing, off the request path (`WorkQueue`).
    let heavyWork: WorkQueue

    /// Runs without figures (stored before figures were, or whose computing failed) counted per
    /// page view at most: a page never reads more than these tracks.
    static let figuresPerRequest = 20

    // MARK: each run's figures

    /// The run's figures, once it is complete (the last chunk or its summary just arrived),
    /// computed after the answer: the uploader never waits for a marathon's track to be read. A
    /// failure, or a stop before they are stored, is the next page view's to make up.
    func figuresIfComplete(device: String, runID: String) {
        Task {
            guard let run = try? await runs.completeActivity(device: device, runID: runID) else { return }
            try? await storeFigures(run, background: true)
        }
    }

    /// Computes the run's figures from its summary and view (computing the view if needed) and stores them.
    func storeFigures(_ run: AccountRun, background: Bool = false) async throws {
        var figures = RunFigures(deviceID: run.deviceID, runID: run.summary.runID, summaryJSON: run.summary.json, startMs: run.summary.startMs,
                                 heartRateSeconds: "[]", bestEfforts: [], sport: run.activity.sport)
        // A summary that is not understood counts nowhere, as on the runs list.
        if let summary = try? RunItem(run.summary).summary {
            let view = try await runView(run, background: background)
            figures.distanceM = summary.distance_m
            figures.movingS = summary.moving_time_s
            figures.hrAvg = summary.hr_avg
            figures.hrMax = summary.hr_max
            figures.heartRateSeconds = String(decoding: try JSONEncoder().encode(view.heartRateSeconds), as: UTF8.self)
            // Records are runs' only, and believed runs' only (a doubted view has no efforts).
            if run.activity.sport == .run { figures.bestEfforts = view.bestEfforts.map { RunFigures.Effort(name: $0.name, seconds: $0.seconds) } }
        }
        try await health.putRunFigures(figures)
    }

    /// Counts the account's runs that have no figures yet, at most `figuresPerRequest`; true
    /// when some are still left (the page says so).
    func countNewRuns(_ account: Account) async throws -> Bool {
        let missing = try await health.runsWithoutFigures(accountID: account.id, limit: Self.figuresPerRequest + 1)
        for run in missing.prefix(Self.figuresPerRequest) { try? await storeFigures(run) }
        return missing.count > Self.figuresPerRequest
    }

    // MARK: a run's view

    /// The run's stored view, computed from its track (and stored) when there is none yet for
    /// this summary and version. The computing is `heavyWork`'s: it throws `WorkQueue.Busy` when
    /// that is full. A stored view is read here: it is bounded (2,000 points of the map, 500
    /// splits, 500 of each chart) and quick to decode. `background`: no request waits for it.
    func runView(_ run: AccountRun, background: Bool = false) async throws -> RunView {
        let source = RunView.source(summaryJSON: run.summary.json, sport: run.activity.sport)
        if let stored = try await runs.runView(device: run.deviceID, runID: run.summary.runID, source: source),
           let view = try? JSONDecoder().decode(RunView.self, from: Data(stored.utf8)) {
            return view
        }
        // Counted before any chunk is read: a run stored before the caps may be larger.
        let stored = try await runs.storedSamples(device: run.deviceID, runID: run.summary.runID, below: run.summary.chunks, excluding: nil)
        guard stored <= TrackChunkFormat.maxSamplesPerRun else {
            throw WebRefusal.plain(.contentTooLarge, "run \(run.summary.runID) has more than \(TrackChunkFormat.maxSamplesPerRun) samples")
        }
        var chunks: [StoredChunk] = []
        for seq in 0..<run.summary.chunks {
            guard let chunk = try await runs.chunk(device: run.deviceID, runID: run.summary.runID, seq: seq) else {
                throw WebRefusal.plain(.notFound, "run \(run.summary.runID) changed while it was read; reload the page")
            }
            chunks.append(chunk)
        }
        let (runID, read, sport) = (run.summary.runID, chunks, run.activity.sport)
        let summary = try? RunItem(run.summary).summary
        let waiting = background ? WorkQueue.backgroundMaxWaiting : nil
        let (view, body, records) = try await heavyWork.run(waiting: waiting) { () throws -> (RunView, String, String) in
            var samples: [ChunkSample] = []
            for chunk in read {
                try TrackChunkFormat.read(chunk.body, gzip: chunk.contentEncoding == "gzip") { samples.append($0) }
                guard samples.count <= TrackChunkFormat.maxSamplesPerRun else {
                    throw WebRefusal.plain(.contentTooLarge, "run \(runID) has more than \(TrackChunkFormat.maxSamplesPerRun) samples")
                }
            }
            let started = ContinuousClock.now
            let view = RunView(samples: samples, sport: sport, summary: summary)
            // How long a view takes, for the operator (and tools/bench-zigzag).
            WorkQueue.logger.info("run view of \(runID): \(samples.count) samples in \(Int((ContinuousClock.now - started) / .milliseconds(1))) ms")
            let encoder = JSONEncoder()
            return (view, String(decoding: try encoder.encode(view), as: UTF8.self), String(decoding: try encoder.encode(view.bestEfforts), as: UTF8.self))
        }
        try await runs.putRunView(device: run.deviceID, runID: runID, source: source, body: body, records: records, doubt: view.doubt)
        return view
    }
}
