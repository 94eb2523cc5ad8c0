import CloudModel
import CloudStore
import Export
import Foundation
import Hummingbird
import PacerContract

/// A signed-in runner's runs recorded elsewhere, imported from a GPX, TCX or FIT file (the
/// downloads are `RunsController`'s). Imported runs belong to a device of the account's own that
/// no token can use (see `Device.importDeviceName`), so they are stored, listed and deleted like
/// a device's runs.
struct ImportController: Sendable {
    let runs: RunRepository
    let devices: DeviceRepository
    /// The imported run's figures, computed after the answer.
    let analysis: RunAnalysis
    /// The file's parsing and reading, off the request path (`WorkQueue`).
    let heavyWork: WorkQueue
    /// Milliseconds since 1970: the import device's creation time.
    let wallClock: @Sendable () -> Int64

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        web.on(.get, "import", SignedInAccess()) { _, context in
            WebPage.importFile.response(values: ["max_mb": FileImport.maxBytes >> 20], csrf: context.session.csrf)
        }
        web.on(.post, "import", SignedInAccess()) { request, context in try await importRun(request, context) }
    }

    /// The file is read (its form parsed, its points read, its run made) on `heavyWork`, not on
    /// the request path: a busy server answers 503 with Retry-After rather than stalling.
    private func importRun(_ request: Request, _ context: SignedInContext) async throws -> Response {
        do {
            return try await importFile(request, context)
        } catch let busy as WorkQueue.Busy {
            return busy.page()
        }
    }

    /// What became of one file of the form (or of a zip).
    private struct FileOutcome {
        var name: String
        var text: String
        var runs: [(id: String, label: String)] = []
        var stored = false
        var refused = false
    }

    private func importFile(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (account, session) = (context.account, context.session)
        let (body, boundary) = try await MultipartForm.collect(request, maxBytes: FileImport.maxBytes)
        let form = try await heavyWork.run { try MultipartForm.parse(body, boundary: boundary, maxFileBytes: FileImport.maxBytes) }
        guard let sent = form.fields["csrf"], WebForm.constantTimeEqual(sent, session.csrf) else {
            throw WebRefusal.plain(.forbidden, "the form's csrf field does not match this browser's session: reload the page and send it again")
        }
        let refuse = { @Sendable (message: String) in
            WebRefusal.form(.badRequest, page: .importFile, message: message, values: ["max_mb": "\(FileImport.maxBytes >> 20)"])
        }
        guard !form.files.isEmpty else { throw refuse("file: choose a GPX, TCX or FIT file (or a zip of them) to import") }
        // Each file read on `heavyWork`: a zip's entries become files of their own.
        let read = try await heavyWork.run { () throws -> [(name: String, bytes: [UInt8], result: Result<(format: FileFormat, runs: [ImportedRun]), ImportError>)] in
            var files: [(name: String, bytes: [UInt8])] = []
            for file in form.files {
                let name = file.name.isEmpty ? "the file" : file.name
                if ZipArchive.isZip(file.bytes) {
                    do { files += try ZipArchive.entries(file.bytes, maxBytes: FileImport.maxBytes).map { (name: "\(name)/\($0.name)", bytes: $0.bytes) } } catch {
                        throw refuse("file: \(name): \(error)")
                    }
                } else {
                    files.append((name: name, bytes: file.bytes))
                }
            }
            return files.map { file in
                do { return (name: file.name, bytes: file.bytes, result: .success(try FileImport.runs(file.bytes, fileName: file.name))) } catch let error as ImportError {
                    return (name: file.name, bytes: file.bytes, result: .failure(error))
                } catch {
                    return (name: file.name, bytes: file.bytes, result: .failure(ImportError("\(error)")))
                }
            }
        }
        // One file that cannot be read: the form again, with why.
        if read.count == 1, case .failure(let error) = read[0].result { throw refuse("file: \(error)") }
        let device = try await importDevice(for: account)
        var outcomes: [FileOutcome] = []
        for file in read {
            switch file.result {
            case .failure(let error):
                outcomes.append(FileOutcome(name: file.name, text: "not imported: \(error)", refused: true))
            case .success(let (format, activities)):
                var outcome = FileOutcome(name: file.name, text: "")
                var sentences: [String] = []
                for (index, activity) in activities.enumerated() {
                    let (runID, stored, known) = try await store(activity, index: index, bytes: file.bytes, account: account, device: device)
                    let summary = activity.summary
                    let named: String = activity.title.map { " (\($0))" } ?? ""
                    let points: String = activity.samples.isEmpty ? "no GPS track (the file's own totals)" : "\(activity.samples.count) points"
                    let distance = RunnerFormat.distance(summary.distance_m)
                    let what = "\(format.name) \(activity.sport.label.lowercased()) of \(summary.start_time.prefix(10))\(named): \(distance), \(points)"
                    var sentence = known ? "already imported (\(what)); nothing changed" : (stored ? what : "imported before; nothing changed (\(what))")
                    if let left = activity.left.sentence { sentence += "; left out: \(left)" }
                    if let doubt = activity.doubt { sentence += "; not believed: \(doubt)" }
                    sentences.append(sentence)
                    outcome.runs.append((id: runID, label: "Open the \(activity.sport.label.lowercased())"))
                    outcome.stored = outcome.stored || stored
                }
                outcome.text = sentences.joined(separator: ". ") + "."
                outcomes.append(outcome)
            }
        }
        let stored = outcomes.contains { $0.stored }
        let title = stored ? "Imported" : (outcomes.allSatisfy(\.refused) ? "Nothing imported" : "Already imported")
        let files: [[String: Any]] = outcomes.map { outcome in
            ["name": outcome.name, "text": outcome.text, "runs": outcome.runs.map { ["id": $0.id, "label": $0.label] }]
        }
        return WebPage.importResult.response(stored ? .created : (outcomes.allSatisfy(\.refused) ? .badRequest : .ok),
                                             values: ["title": title, "files": files], csrf: nil)
    }

    /// Stores one activity of a file unless the account has it already: the same file (its run
    /// id), the same device's serial and start (`identity`), or a run of any of the account's
    /// devices, of its sport, starting within a minute of it with a distance within 2 % (or 50 m).
    private func store(_ activity: ImportedRun, index: Int, bytes: [UInt8], account: Account, device: Device)
        async throws -> (runID: String, stored: Bool, known: Bool) {
        let runID = FileImport.runID(accountID: account.id, bytes: bytes, activity: index)
        let summary = activity.summary
        let startMs = WireTime.milliseconds(summary.start_time) ?? 0
        if try await runs.accountRun(accountID: account.id, runID: runID) == nil {
            if let known = try await runs.runID(device: device.id, identity: activity.identity) { return (known, false, true) }
            let near = try await runs.accountRuns(accountID: account.id, fromMs: startMs - 60_000, toMs: startMs + 60_001, limit: 20, offset: 0)
            for run in near where run.activity.sport == activity.sport {
                guard let other = try? RunItem(run.summary).summary else { continue }
                if abs(other.distance_m - summary.distance_m) <= max(50, 0.02 * max(other.distance_m, summary.distance_m)) {
                    return (run.summary.runID, false, true)
                }
            }
        }
        var stored = false
        let chunkBodies = activity.chunkBodies
        for (seq, body) in chunkBodies.enumerated() {
            let chunk = StoredChunk(runID: runID, seq: seq, body: body, contentEncoding: nil, digest: Tokens.digest(Array("identity".utf8) + [0] + body),
                                    samples: min(TrackChunkFormat.samplesPerChunk, activity.samples.count - seq * TrackChunkFormat.samplesPerChunk))
            if try await runs.putChunk(chunk, device: device.id) == .created { stored = true }
        }
        if try await runs.putSummary(StoredSummary(runID: runID, json: try JSONInput.canonical(summary), chunks: summary.chunks, startMs: startMs),
                                      device: device.id) != .unchanged { stored = true }
        if stored {
            try await runs.setActivity(device: device.id, runID: runID,
                                       RunActivity(sport: activity.sport, title: activity.title, doubt: activity.doubt, identity: activity.identity))
            analysis.figuresIfComplete(device: device.id, runID: runID)
        }
        return (runID, stored, false)
    }

    /// The account's device for imported runs, made at its first import. Its token hash is the
    /// revoked mark, which no token hashes to: nothing can ever sign in as it.
    private func importDevice(for account: Account) async throws -> Device {
        let name = Device.importDeviceName(accountID: account.id)
        if let device = try await devices.devices().first(where: { $0.name == name }) { return device }
        let device = Device(id: UUID().uuidString.lowercased(), name: name, email: nil, webhook: nil,
                            createdAt: WireTime.text(milliseconds: wallClock()))
        do {
            try await devices.addDevice(device, tokenHash: Device.revokedTokenMark + device.id, webhookSecret: nil)
            _ = try await devices.assignDevice(name: name, accountID: account.id)
            return device
        } catch is StoreError {
            // Another request made it first.
            guard let made = try await devices.devices().first(where: { $0.name == name }) else { throw StoreError("the import device of \(account.id) went") }
            return made
        }
    }
}

extension Device {
    /// The name of an account's device for imported runs: one per account, never a real device
    /// (`pacer-cloud device add` refuses names with this prefix).
    static func importDeviceName(accountID: String) -> String { "imported:" + accountID }

    var holdsImports: Bool { name.hasPrefix("imported:") }
}

/// A posted multipart/form-data form (RFC 7578): its text fields and its files.
struct MultipartForm: Sendable {
    var fields: [String: String] = [:]
    var files: [(name: String, bytes: [UInt8])] = []
    /// The most files one form takes.
    static let maxFiles = 100

    /// The body, read whole, and the boundary, checked; `parse` makes the form of them.
    static func collect(_ request: Request, maxBytes: Int) async throws -> (body: [UInt8], boundary: String) {
        let type = request.headers[.contentType] ?? ""
        let parameters = type.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parameters.first?.lowercased() == "multipart/form-data",
              let boundaryParameter = parameters.first(where: { $0.lowercased().hasPrefix("boundary=") }) else {
            throw WebRefusal.plain(.unsupportedMediaType, "send the file as multipart/form-data with a boundary (Content-Type), as the import form does")
        }
        let boundary = boundaryParameter.dropFirst("boundary=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        guard (1...70).contains(boundary.utf8.count) else { throw WebRefusal.plain(.badRequest, "the multipart boundary is not 1 to 70 characters") }
        let body: ByteBuffer
        // The file and a few small fields.
        do { body = try await request.body.collect(upTo: maxBytes + 16 * 1024) } catch {
            throw WebRefusal.plain(.contentTooLarge, "file: larger than \(maxBytes >> 20) MB, the most an import takes")
        }
        return (Array(body.readableBytesView), boundary)
    }

    static func parse(_ bytes: [UInt8], boundary: String, maxFileBytes: Int) throws(WebRefusal) -> MultipartForm {
        let malformed = WebRefusal.plain(.badRequest, "the upload is not a well-formed multipart/form-data body")
        let delimiter = Array("--\(boundary)".utf8)
        let separator = Array("\r\n--\(boundary)".utf8)
        guard var position = find(delimiter, in: bytes, from: 0) else { throw malformed }
        position += delimiter.count
        var form = MultipartForm()
        while true {
            guard position + 2 <= bytes.count else { throw malformed }
            if bytes[position] == UInt8(ascii: "-"), bytes[position + 1] == UInt8(ascii: "-") { return form }
            guard bytes[position] == 13, bytes[position + 1] == 10 else { throw malformed }
            position += 2
            guard let headerEnd = find([13, 10, 13, 10], in: bytes, from: position),
                  let next = find(separator, in: bytes, from: headerEnd + 4) else { throw malformed }
            let headers = String(decoding: bytes[position..<headerEnd], as: UTF8.self)
            let content = Array(bytes[(headerEnd + 4)..<next])
            position = next + separator.count
            guard let disposition = headers.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-disposition:") }),
                  let name = parameter("name", in: disposition) else { throw malformed }
            if let fileName = parameter("filename", in: disposition) {
                // A file input left empty sends a part with no name and no bytes: no file.
                guard name == "file", !(fileName.isEmpty && content.isEmpty) else { continue }
                guard form.files.count < maxFiles else { throw WebRefusal.plain(.badRequest, "file: more than \(maxFiles) files; send them in several imports") }
                guard content.count <= maxFileBytes else { throw WebRefusal.plain(.contentTooLarge, "file: larger than \(maxFileBytes >> 20) MB, the most an import takes") }
                form.files.append((String(fileName.prefix(200)), content))
            } else if form.fields[name] == nil {
                guard let value = String(validating: content, as: UTF8.self), content.count <= 4096 else {
                    throw WebRefusal.plain(.badRequest, "the form field \(name.prefix(40)) is not short UTF-8 text")
                }
                form.fields[name] = value
            }
        }
    }

    /// `name="value"` of a Content-Disposition line.
    private static func parameter(_ name: String, in line: Substring) -> String? {
        for part in line.split(separator: ";").dropFirst() {
            let pair = part.trimmingCharacters(in: .whitespaces)
            guard pair.hasPrefix(name + "=") else { continue }
            return pair.dropFirst(name.count + 1).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, needle.count <= haystack.count else { return nil }
        var index = start
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
