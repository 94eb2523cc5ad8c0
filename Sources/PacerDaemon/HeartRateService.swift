import BlueZ
import ServiceLifecycle
import SOS
import Systemd

/// The heart-rate strap into the pipeline: one strap client per strap choice, restarted when the
/// choice changes. The strap is monitored whether or not a run is recording. Events go to the
/// pipeline thread, which stamps them on the run's timebase, records and logs them.
struct HeartRateService: Service {
    let settings: StrapSettings
    let pipeline: PipelineThread
    /// Notifications go to the SOS lane first and straight, from the bus thread: it must never wait
    /// for the pipeline or the cooperative pool.
    let sos: SOSLane

    func run() async throws {
        var client: Task<Void, Never>?
        for await choice in settings.changes().cancelOnGracefulShutdown() {
            client?.cancel()
            await client?.value
            pipeline.queue.put(.strapChoice(choice))
            guard !choice.straps.isEmpty else {
                client = nil
                continue
            }
            let configuration = StrapClientConfiguration(straps: choice.straps, adapter: choice.adapter)
            client = Task { [pipeline, sos] in
                // The SOS lane hears each measurement from the bus thread itself, in one hand-off;
                // the pipeline (recording, status) through the client's events.
                let strap = HeartRateStrapClient(configuration: configuration, openBus: { () throws(BusError) in try BusConnection.system() },
                                                 onNotification: { address, value, receivedNs in
                                                     sos.put(.heartRate(bytes: value, receivedNs: receivedNs, strap: "\(address)"))
                                                 })
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await strap.run() }
                    for await event in strap.events {
                        pipeline.queue.put(.strap(event))
                    }
                }
            }
        }
        client?.cancel()
        await client?.value
    }
}
