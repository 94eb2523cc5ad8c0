// The SOS lane under load, in process: tools/bench-sos builds and runs this (it starts the
// private bus, the simulated modem and the HTTPS servers, then prints the table).
//
// Load, all at once for the whole measurement:
//   storage  a run store (its own SQLite file, WAL, synchronous=FULL) committing a batch of 4 s
//            of samples and raw lines every 100 ms: its writer is held, and the disk fsyncs.
//   speech   espeak-ng synthesising sentence after sentence (paced as if played).
//   upload   a 2 MB POST always in flight to a server that answers after 2 s.
// Each breach: three heart-rate samples above hr_high_bpm (the third confirms), then 31 in range
// (the alert closes, the watcher re-arms and the all clear goes out). Sample times are synthetic
// (1 s apart) so a thousand breaches take minutes; what is measured is real: CLOCK_MONOTONIC from
// the confirming sample put into the lane's queue to the alert committed and the first channel
// attempt started (the lane's own stamps).

import FoundationEssentials
import HTTPClient
import ModemManager
import PacerCore
import SOS
import Speech
import Store
import Synchronization
import Systemd
import Threads

#if canImport(Glibc)
import Glibc
#endif

struct Options {
    var directory = "/tmp/bench-sos"
    var alertsURL: String?
    var uploadURL: String?
    var caFile: String?
    var bus: String?
    var breaches = 1000
    var contacts = ["+393471234567", "+447700900123"]
    var noLoad = false
    var jsonOut: String?
}

func parse() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst().makeIterator()
    while let argument = arguments.next() {
        switch argument {
        case "--dir": options.directory = arguments.next() ?? options.directory
        case "--alerts-url": options.alertsURL = arguments.next()
        case "--upload-url": options.uploadURL = arguments.next()
        case "--ca": options.caFile = arguments.next()
        case "--bus": options.bus = arguments.next()
        case "--breaches": options.breaches = Int(arguments.next() ?? "") ?? options.breaches
        case "--no-load": options.noLoad = true
        case "--json-out": options.jsonOut = arguments.next()
        default:
            print("bench-sos: unknown argument \(argument)")
            exit(2)
        }
    }
    return options
}

let options = parse()
mkdir(options.directory, 0o755)
let stop = Atomic<Bool>(false)

// MARK: Load

let commits = Mutex<[Double]>([])
func storageLoad() throws {
    let store = try RunStore(path: options.directory + "/pacer.db", cacheKiB: 512)
    let start = Timestamp(milliseconds: 1_778_400_000_000)
    let runID = try store.beginRun(uuid: UUID().uuidString.lowercased(), startTime: start)
    var t = start
    try DetachedThread.start {
        while !stop.load(ordering: .relaxed) {
            var batch = TrackBatch()
            for _ in 0..<4 {
                t = t.adding(seconds: 1)
                batch.samples.append(TrackSample(time: t, coordinate: Coordinate(latitude: 45.47, longitude: 9.22), speed: 3.2, distance: 100, moving: true, movingTime: 10))
                batch.heartRate.append(HeartRateSample(time: t, bpm: 150, rrIntervalsMs: [400], contact: true))
                batch.rawLines.append(String(repeating: "{\"class\":\"TPV\",\"mode\":3,\"lat\":45.47,\"lon\":9.22} ", count: 4))
                batch.note(t)
            }
            let begun = MonotonicTime.nanoseconds()
            do { try store.append(batch, runID: runID, runStart: start) } catch { print("bench-sos: storage load: \(error)"); return }
            let took = Double(MonotonicTime.nanoseconds() - begun) / 1e6
            commits.withLock { $0.append(took) }
            usleep(100_000)
        }
    }
}

let utterances = Atomic<Int>(0)
func speechLoad() throws -> Speaker {
    let speaker = try Speaker(settings: SpeechSettings(), sink: NullSink(), realTimePacing: true)
    try DetachedThread.start {
        var n = 0
        while !stop.load(ordering: .relaxed) {
            n += 1
            speaker.say(Cue(time: Timestamp(milliseconds: Int64(n)), kind: .summary,
                            text: "\(n) kilometres. Time 52 minutes \(n % 60) seconds. Average pace 4 minutes 59 seconds per kilometre. Heart rate 150."))
            utterances.add(1, ordering: .relaxed)
            usleep(1_500_000)
        }
    }
    return speaker
}

let uploads = Atomic<Int>(0)
func uploadLoad(url: String, client: HTTPClient) {
    Task.detached {
        let body = [UInt8](repeating: 0x61, count: 2 << 20)
        while !stop.load(ordering: .relaxed) {
            let request = HTTPRequest(method: "POST", url: url + "/v1/runs", headers: [("Content-Type", "application/octet-stream")], body: body, timeout: .seconds(30))
            _ = try? await client.perform(request)
            uploads.add(1, ordering: .relaxed)
        }
    }
}

// MARK: The lane

let timings = Mutex<[AlertTiming]>([])
let acknowledged = Atomic<Int>(0)
let failures = Atomic<Int>(0)
var rules = SOSRules()
rules.enabled = true
rules.highBpm = 205
rules.lowBpm = 35
rules.followUpEverySeconds = 0
let settings = LaneSettings(rules: rules, contacts: options.bus == nil ? [] : options.contacts,
                            alertsURL: options.alertsURL.map { $0 + "/v1/alerts" }, hook: ["/bin/true"], deviceName: "bench",
                            attemptTimeoutSeconds: 30, retryMaxSeconds: 2)
let client = HTTPClient(configuration: .init(caFile: options.caFile))
var channels: [any AlertChannel] = [HookChannel(argv: ["/bin/true"]), HTTPSChannel(client: client, token: "bench")]
if let bus = options.bus {
    channels.append(SMSChannel(sender: SMSSender(openBus: { () throws(BusError) in try BusConnection.connect(address: bus) })))
}
unlink(options.directory + "/sos.db")
let alertStore = try AlertStore(path: options.directory + "/sos.db")
let lane = SOSLane()
let speakerForLane: Speaker?
do {
    if !options.noLoad {
        try storageLoad()
        speakerForLane = try speechLoad()
        if let upload = options.uploadURL { uploadLoad(url: upload, client: HTTPClient(configuration: .init(caFile: options.caFile))) }
    } else {
        speakerForLane = nil
    }
}
try lane.start(settings: settings, store: alertStore, channels: channels, log: { level, message, _ in
    if message.contains("acknowledged by") { acknowledged.add(1, ordering: .relaxed) }
    if message.contains("failed (attempt") { failures.add(1, ordering: .relaxed) }
    if case .critical = level, !message.contains("raised:") { print("bench-sos: \(message)") }
}, onCue: { cue, ns in speakerForLane?.say(cue, offeredAt: ns) }, onTiming: { timing in timings.withLock { $0.append(timing) } })

// Let the load settle into its rhythm first.
sleep(3)
let measureStart = MonotonicTime.nanoseconds()
let commitsBefore = commits.withLock { $0.count }
let utterancesBefore = utterances.load(ordering: .relaxed)
let uploadsBefore = uploads.load(ordering: .relaxed)

// Synthetic sample time, far ahead of the monotonic clock the lane's tick uses, so its ticks
// never see silence between these samples.
var t = Double(MonotonicTime.nanoseconds() / 1_000_000) + 1e9
@MainActor func put(_ bpm: Int) {
    lane.put(.sample(HeartRateSample(time: Timestamp(milliseconds: Int64(t)), bpm: bpm, rrIntervalsMs: [60_000 / Double(bpm)], contact: true),
                     receivedNs: MonotonicTime.nanoseconds()))
    t += 1000
}
for breach in 0..<options.breaches {
    for bpm in [150, 150, 150, 212, 214, 215] { put(bpm) }
    usleep(40_000)  // let the alert go out before the all clear is prepared
    for _ in 0..<31 { put(150) }
    usleep(20_000)
    if breach % 100 == 99 { print("bench-sos: \(breach + 1) breaches injected") }
}
let measureEnd = MonotonicTime.nanoseconds()
// The deliveries still in flight finish (or are retried) before the counts are read.
let drainDeadline = MonotonicTime.nanoseconds() + 60_000_000_000
let expected = options.breaches * 2 * settings.targets.count
while acknowledged.load(ordering: .relaxed) < expected && MonotonicTime.nanoseconds() < drainDeadline { usleep(100_000) }
stop.store(true, ordering: .relaxed)

// MARK: Report

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1)]
}
func f(_ v: Double) -> String { FixedDecimal.format(v, decimals: 2) ?? "n/a" }

let all = timings.withLock { $0 }
let recorded = all.compactMap { t in t.recordedNs.map { Double($0 - t.confirmingNs) / 1e6 } }
let dispatched = all.compactMap { t in t.firstDispatchNs.map { Double($0 - t.confirmingNs) / 1e6 } }
let confirm = all.map(\.confirmationSeconds)
let storageCommits = commits.withLock { Array($0[commitsBefore...]) }
let seconds = Double(measureEnd - measureStart) / 1e9
let p99 = percentile(dispatched, 99)
let worstDeadline = (confirm.max() ?? .nan) + (dispatched.max() ?? .nan) / 1000

print("")
print("| measure | value | target | verdict |")
print("|---|---|---|---|")
print("| breaches injected / alerts raised | \(options.breaches) / \(all.count) | equal | \(all.count == options.breaches ? "PASS" : "FAIL") |")
print("| confirming sample → alert committed (p50 / p99 / max) | \(f(percentile(recorded, 50))) / \(f(percentile(recorded, 99))) / \(f(recorded.max() ?? .nan)) ms | info | |")
print("| confirming sample → first dispatch started (p50 / p99 / max) | \(f(percentile(dispatched, 50))) / \(f(p99)) / \(f(dispatched.max() ?? .nan)) ms | p99 ≤ 50 ms | \(p99 <= 50 ? "PASS" : "FAIL") |")
print("| first out-of-range sample → first dispatch, worst (confirmation \(f(confirm.max() ?? .nan)) s at 1 Hz + max above) | \(f(worstDeadline)) s | ≤ 5 s | \(worstDeadline <= 5 ? "PASS" : "FAIL") |")
print("| deliveries acknowledged (alert + all clear, \(settings.targets.count) targets each) | \(acknowledged.load(ordering: .relaxed)) of \(expected); \(failures.load(ordering: .relaxed)) failed attempts retried | all | \(acknowledged.load(ordering: .relaxed) >= expected ? "PASS" : "FAIL") |")
print("| load: storage commits during the run (p50 / max commit) | \(storageCommits.count) in \(f(seconds)) s (\(f(percentile(storageCommits, 50))) / \(f(storageCommits.max() ?? .nan)) ms) | info | |")
print("| load: sentences offered to espeak-ng / 2 MB uploads completed | \(utterances.load(ordering: .relaxed) - utterancesBefore) / \(uploads.load(ordering: .relaxed) - uploadsBefore) | info | |")
let pass = all.count == options.breaches && p99 <= 50 && worstDeadline <= 5 && acknowledged.load(ordering: .relaxed) >= expected

// The raw figures (tools/bench-sos --json-out): milliseconds unless the name says otherwise;
// null where nothing was measured.
struct Figures: Encodable {
    struct Spread: Encodable {
        var p50: Double?, p99: Double?, max: Double?
        init(_ values: [Double]) {
            func finite(_ v: Double) -> Double? { v.isFinite ? v : nil }
            p50 = finite(percentile(values, 50)); p99 = finite(percentile(values, 99)); max = values.max()
        }
    }
    var breaches: Int
    var alertsRaised: Int
    var confirmToCommittedMs: Spread
    var confirmToDispatchMs: Spread
    var confirmationMaxS: Double?
    var worstBreachToDispatchS: Double?
    var acknowledged: Int
    var expectedAcknowledgements: Int
    var failedAttemptsRetried: Int
    var measuredSeconds: Double
    var storageCommits: Int
    var storageCommitMs: Spread
    var sentencesOffered: Int
    var uploadsCompleted: Int
    var load: Bool
    var pass: Bool
}
if let path = options.jsonOut {
    let figures = Figures(
        breaches: options.breaches, alertsRaised: all.count,
        confirmToCommittedMs: .init(recorded), confirmToDispatchMs: .init(dispatched),
        confirmationMaxS: confirm.max(), worstBreachToDispatchS: worstDeadline.isFinite ? worstDeadline : nil,
        acknowledged: acknowledged.load(ordering: .relaxed), expectedAcknowledgements: expected,
        failedAttemptsRetried: failures.load(ordering: .relaxed), measuredSeconds: seconds,
        storageCommits: storageCommits.count, storageCommitMs: .init(storageCommits),
        sentencesOffered: utterances.load(ordering: .relaxed) - utterancesBefore,
        uploadsCompleted: uploads.load(ordering: .relaxed) - uploadsBefore, load: !options.noLoad, pass: pass)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    encoder.keyEncodingStrategy = .convertToSnakeCase
    guard let data = try? encoder.encode(figures), let file = fopen(path, "w") else {
        print("bench-sos: could not write \(path)")
        exit(2)
    }
    _ = data.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fputc(0x0A, file)
    fclose(file)
}
exit(pass ? 0 : 1)
