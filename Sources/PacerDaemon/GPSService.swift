import GPSD
import PacerSession
import ServiceLifecycle

/// gpsd's lines into the pipeline. The client's own thread owns libgps and reconnects; this only
/// forwards what it reports, so the cooperative pool never waits on a socket.
struct GPSService: Service {
    let host: String
    let port: Int
    let pipeline: PipelineThread
    let log: DaemonLog

    func run() async throws {
        let client = GPSDClient(host: host, port: port)
        client.start()
        defer { client.stop() }
        for await event in client.events.cancelOnGracefulShutdown() {
            switch event {
            case .line(let line, let receivedNs):
                pipeline.queue.put(.gpsLine(line, receivedNs: receivedNs))
            case .connected:
                pipeline.queue.put(.gpsLink(.connected))
            case .disconnected(let reason, _):
                pipeline.queue.put(.gpsLink(.lost(reason: reason)))
            case .linesDropped(let count, _):
                log(.error, "gps", "the pipeline fell behind gpsd: \(count) lines dropped")
            }
        }
    }
}
