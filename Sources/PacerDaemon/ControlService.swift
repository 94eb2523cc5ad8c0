import Control
import PacerCore
import RunViews
import ServiceLifecycle
import Store
import Synchronization
import Threads

/// The control socket: run commands go to the pipeline thread (the one writer); the runs list,
/// a run's detail and exports are read here from a read-only handle on the store, so a long
/// export never holds up the pipeline. Protocol: Sources/Control/PROTOCOL.md.
struct ControlService: Service {
    let server: ControlServer
    let pipeline: PipelineThread
    let reader: RunStore
    let log: DaemonLog

    func run() async throws {
        await withGracefulShutdownHandler {
            await server.serve { request, stream in
                try await handle(request, stream)
            }
        } onGracefulShutdown: {
            server.stop()
        }
    }

    private func handle(_ request: ControlRequest, _ stream: ControlReplyStream) async throws -> JSONValue? {
        switch request.command {
        case "status": return try await pipelineCommand(.status)
        case "run.start": return try await pipelineCommand(.start)
        case "run.stop": return try await pipelineCommand(.stop)
        case "run.pause": return try await pipelineCommand(.control(.pause))
        case "run.resume": return try await pipelineCommand(.control(.resume))
        case "run.lap": return try await pipelineCommand(.control(.lap))
        case "runs.delete": return try await pipelineCommand(.delete(runID: Int64(try request.int("run", in: 1...Int.max))))
        case "runs.list":
            let limit = try request.int("limit", default: 20, in: 1...1000)
            let offset = try request.int("offset", default: 0, in: 0...Int.max)
            let view = try request.string("view", default: "json", oneOf: ["json", "text"])
            let (runs, total) = try query { () throws(StoreError) in (try reader.runs(limit: limit, offset: offset), try reader.runCount()) }
            if view == "text" { return ["text": .string(RunViews.listText(runs, total: total, page: offset / limit + 1, limit: limit))] }
            return try parse(RunViews.listJSON(runs, total: total))
        case "runs.show":
            let id = Int64(try request.int("run", in: 1...Int.max))
            let view = try request.string("view", default: "json", oneOf: ["json", "text"])
            let detail = try query { () throws(StoreError) in try reader.detail(id) }
            if view == "text" { return ["text": .string(RunViews.detailText(detail))] }
            return try parse(RunViews.detailJSON(detail))
        case "runs.export":
            let id = Int64(try request.int("run", in: 1...Int.max))
            let name = try request.string("format", default: "gpx", oneOf: RunExportFormat.allCases.map(\.rawValue))
            return try await export(id, RunExportFormat(rawValue: name)!, stream)
        default:
            throw ControlError.unknownCommand(request.command)
        }
    }

    private func pipelineCommand(_ command: RunCommand) async throws -> JSONValue {
        let outcome = await withCheckedContinuation { (done: CheckedContinuation<Result<DaemonStatus, CommandFailure>, Never>) in
            pipeline.queue.put(.command(command, reply: { done.resume(returning: $0) }))
        }
        switch outcome {
        case .success(let status): return status.json
        case .failure(let failure):
            switch failure.code {
            case .conflict: throw ControlError.conflict(failure.message)
            case .notFound: throw ControlError.notFound(failure.message)
            case .internalError: throw ControlError.internalError(failure.message)
            }
        }
    }

    /// A store read, its errors worded for the client.
    private func query<T>(_ body: () throws(StoreError) -> T) throws(ControlError) -> T {
        do {
            return try body()
        } catch {
            if case .noSuchRun(let id) = error { throw ControlError.notFound("no run \(id)") }
            throw ControlError.internalError("\(error)")
        }
    }

    private func parse(_ json: String) throws -> JSONValue {
        do { return try JSONValue(parsing: json) } catch { throw ControlError.internalError("could not encode the reply: \(error)") }
    }

    /// Streams an export: a thread of its own reads the store and fills a small channel; chunks
    /// go out as the client takes them.
    private func export(_ id: Int64, _ format: RunExportFormat, _ stream: ControlReplyStream) async throws -> JSONValue? {
        guard let run = try query({ () throws(StoreError) in try self.reader.run(id) }) else { throw ControlError.notFound("no run \(id)") }
        if format == .gpsd, run.rawPruned {
            throw ControlError.conflict("run \(id)'s raw gpsd lines were removed by retention ([storage] keep_raw_days); GPX, TCX and HR exports remain")
        }
        let channel = ChunkChannel()
        let failure = Mutex<String?>(nil)
        let store = reader
        do {
            try DetachedThread.start {
                var pending = ""
                do {
                    try RunExporter.export(store, id, format) { text in
                        pending += text
                        if pending.utf8.count >= 32 * 1024 {
                            try channel.put(pending)
                            pending = ""
                        }
                    }
                    if !pending.isEmpty { try channel.put(pending) }
                } catch is ChunkChannel.Cancelled {
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
                channel.finish()
            }
        } catch {
            throw ControlError.internalError("export of run \(id): \(error)")
        }
        do {
            while let chunk = await channel.next() { try await stream.send(chunk: chunk) }
        } catch {
            channel.cancel()
            while await channel.next() != nil {}
            throw error
        }
        if let message = failure.withLock({ $0 }) {
            log(.error, "control", "export of run \(id) as \(format.rawValue) failed: \(message)", runID: id)
            throw ControlError.internalError("export failed part-way: \(message)")
        }
        return nil
    }
}

extension DaemonStatus {
    var json: JSONValue {
        var object: [String: JSONValue] = [
            "state": .string(phase.rawValue),
            "gps": .string(gps.rawValue),
            "line": .string(line),
            "distance_m": JSONValue((distance * 100).rounded() / 100),
            "moving_time_s": JSONValue((movingTime * 1000).rounded() / 1000),
        ]
        object["run"] = runID.map { JSONValue(Int($0)) } ?? .null
        object["store_problem"] = storeProblem.map(JSONValue.string) ?? .null
        object["last_sample_time"] = lastSampleTime.map { .string($0.iso8601) } ?? .null
        return .object(object)
    }
}
